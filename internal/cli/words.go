package cli

import "fmt"

// Count is n with its noun, singular for one: Count(1, "file", "files") is
// "1 file".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// NotNegative refuses a negative value of an integer flag whose zero means
// a default (zeroMeans says which), in the same words for every command.
func NotNegative(flag string, v int, zeroMeans string) error {
	if v < 0 {
		return fmt.Errorf("%s %d is negative (0 means %s)", flag, v, zeroMeans)
	}
	return nil
}
