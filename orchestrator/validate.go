package orchestrator

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The worker API's limits, checked at admission so that a request the
// worker would refuse is refused before its stream starts (OC-CTRL-2034).
const (
	maxPromptChars = 32768
	maxStopStrings = 4
)

// rangeCheck is one optional number field and its closed range.
type rangeCheck struct {
	field  string
	set    bool
	v      float64
	lo, hi float64
}

// validateTask checks a task's fields, naming the first bad one.
func validateTask(r *TaskRequest) *apiError {
	if r.TaskID != "" && !taskIDValid(r.TaskID) {
		return invalidParams("task_id: 1 to 128 letters, digits, '-', '_' or '.'")
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return invalidParams("prompt: must be a non-empty string")
	}
	if !utf8.ValidString(r.Prompt) {
		return invalidParams("prompt: must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(r.Prompt); n > maxPromptChars {
		return invalidParams("prompt: has " + itoa(n) + " characters, at most " + itoa(maxPromptChars) + " allowed")
	}
	num := func(p *float64) (bool, float64) {
		if p == nil {
			return false, 0
		}
		return true, *p
	}
	intNum := func(p *int) (bool, float64) {
		if p == nil {
			return false, 0
		}
		return true, float64(*p)
	}
	var checks []rangeCheck
	add := func(field string, set bool, v, lo, hi float64) {
		checks = append(checks, rangeCheck{field, set, v, lo, hi})
	}
	set, v := intNum(r.MaxTokens)
	add("max_tokens", set, v, 1, 1<<30)
	set, v = num(r.Temperature)
	add("temperature", set, v, 0, 2)
	set, v = num(r.TopP)
	add("top_p", set, v, 0, 1)
	set, v = intNum(r.TopK)
	add("top_k", set, v, 0, 1<<30)
	set, v = num(r.MinP)
	add("min_p", set, v, 0, 1)
	set, v = num(r.RepetitionPenalty)
	add("repetition_penalty", set, v, 0, 2)
	for _, c := range checks {
		if c.set && !(c.v >= c.lo && c.v <= c.hi) {
			return invalidParams(fmt.Sprintf("%s: must be between %g and %g, got %g", c.field, c.lo, c.hi, c.v))
		}
	}
	if len(r.Stop) > maxStopStrings {
		return invalidParams("stop: at most " + itoa(maxStopStrings) + " strings allowed")
	}
	for i, s := range r.Stop {
		if s == "" {
			return invalidParams("stop: string " + itoa(i) + " is empty")
		}
	}
	return nil
}
