// Package flagcheck validates the number and duration flags of every dynops
// command in one place: no flag takes a negative value, and the flags below
// have their own lower and upper bounds (e.g. --segments at least 1). Root
// runs Check before any command, so a new command's flags are checked too.
package flagcheck

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Bound is the range a flag's value must be in; an empty side is unbounded
// (apart from the rule that nothing is negative).
type Bound struct {
	Min, Max string // in the flag's own syntax: "1", "1s", "12h"
	Why      string // what the bound protects, for the error
}

// Bounds are the flags with more than "not negative", by name: a flag of
// that name means the same in every command.
func Bounds() map[string]Bound {
	return map[string]Bound{
		"segments":                {Min: "1", Max: "1000000", Why: "DynamoDB parallel scan takes 1 to 1,000,000 segments"},
		"workers":                 {Min: "1", Max: "1024", Why: "at least one writer"},
		"concurrency":             {Min: "1", Max: "1024", Why: "at least one message at a time"},
		"parallel":                {Min: "1", Max: "1024", Why: "at least one file at a time"},
		"export-parallel":         {Min: "1", Max: "1024", Why: "at least one export file at a time"},
		"visibility-timeout":      {Min: "1s", Max: "12h", Why: "SQS takes 1 s to 12 h, in whole seconds"},
		"critical":                {Min: "1s", Max: "24h", Why: "a stream keeps records 24 h"},
		"max-replication-latency": {Min: "1ms", Why: "a latency bound of 0 refuses every failover"},
		"latency-window":          {Min: "1m", Max: "24h", Why: "CloudWatch needs at least a minute of datapoints"},
		"replication-timeout":     {Min: "1s", Why: "the canary needs time to replicate"},
		"rate":                    {Min: "1", Why: "a rate of 0 never ends"},
		"batch-size":              {Min: "1", Max: "25", Why: "BatchWriteItem takes 1 to 25 requests"},
		"timeout":                 {Max: "24h"},
	}
}

// Check returns an error naming the first flag of fs (set or defaulted) whose
// value is negative or outside its Bound.
func Check(fs *pflag.FlagSet) error {
	bounds := Bounds()
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		err = checkFlag(f, bounds[f.Name])
	})
	return err
}

func checkFlag(f *pflag.Flag, b Bound) error {
	switch f.Value.Type() {
	case "duration":
		v, perr := time.ParseDuration(f.Value.String())
		if perr != nil {
			return nil // pflag already refused it
		}
		if v < 0 {
			return fmt.Errorf("--%s %s: a duration cannot be negative; write e.g. --%s %s", f.Name, f.Value, f.Name, example(f, b))
		}
		if b.Min != "" {
			if lo, _ := time.ParseDuration(b.Min); v < lo {
				return fmt.Errorf("--%s %s is below %s (%s)", f.Name, f.Value, b.Min, b.Why)
			}
		}
		if b.Max != "" {
			if hi, _ := time.ParseDuration(b.Max); v > hi {
				return fmt.Errorf("--%s %s is above %s (%s)", f.Name, f.Value, b.Max, b.Why)
			}
		}
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		if perr != nil {
			return nil
		}
		if v < 0 {
			return fmt.Errorf("--%s %s: a count cannot be negative; write e.g. --%s %s", f.Name, f.Value, f.Name, example(f, b))
		}
		if b.Min != "" {
			if lo, _ := strconv.ParseFloat(b.Min, 64); v < lo {
				return fmt.Errorf("--%s %s is below %s (%s)", f.Name, f.Value, b.Min, b.Why)
			}
		}
		if b.Max != "" {
			if hi, _ := strconv.ParseFloat(b.Max, 64); v > hi {
				return fmt.Errorf("--%s %s is above %s (%s)", f.Name, f.Value, b.Max, b.Why)
			}
		}
	}
	return nil
}

func example(f *pflag.Flag, b Bound) string {
	if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" {
		return f.DefValue
	}
	if b.Min != "" {
		return b.Min
	}
	return "0"
}
