package main

import (
	"slices"
	"testing"
)

func TestDevices(t *testing.T) {
	for _, c := range []struct {
		gpus string
		cpu  int
		want []string
	}{
		{"0,1", 0, []string{"cuda:0", "cuda:1"}},
		{" 3 ", 0, []string{"cuda:3"}},
		{"", 2, []string{"cpu", "cpu"}},
		{"", 0, nil},
		{"0,0", 0, nil},
		{"0,x", 0, nil},
		{"0", 2, nil},
	} {
		got, err := (&cmd{GPUs: c.gpus, CPUWorkers: c.cpu}).devices()
		if (err == nil) != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("--gpus %q --cpu-workers %d: %v %v; want %v", c.gpus, c.cpu, got, err, c.want)
		}
	}
}
