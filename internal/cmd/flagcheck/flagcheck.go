// Package flagcheck is the one way a dynops flag's range is declared,
// shown and checked. A command declares a range where it registers the flag
// (Range); the range is appended to the flag's --help line ("(1 to 64)") and
// root runs Check before any command, so every refusal has one shape:
//
//	--concurrency 100 is out of range: use 1 to 64 (Lambda invocations at once)
//
// A number or duration flag without a declared range is still refused below
// 0: nothing in dynops takes a negative count or duration.
package flagcheck

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/awsconfig"
)

// annotation is the pflag annotation that holds a flag's range: min, max, why.
const annotation = "dynops.range"

// Bound is the range a flag's value must be in; an empty side is unbounded
// (apart from the rule that nothing is negative).
type Bound struct {
	Min, Max string // in the flag's own syntax: "1", "1s", "12h"
	Why      string // what the bound protects, for the error
}

// Text is the range as --help and the refusal show it: "1 to 64", "1s or
// more", "0 to 24h".
func (b Bound) Text(zero string) string {
	switch {
	case b.Min != "" && b.Max != "":
		return b.Min + " to " + b.Max
	case b.Min != "":
		return b.Min + " or more"
	case b.Max != "":
		return zero + " to " + b.Max
	}
	return zero + " or more"
}

// Range declares the range of fs's flag name (registered just before) and
// shows it in the flag's --help line. min and max are in the flag's syntax
// ("" for unbounded); a bound that does not parse, or a flag that is not
// there, is a programming error and panics.
func Range(fs *pflag.FlagSet, name, min, max, why string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("flagcheck.Range: no flag --" + name)
	}
	b := Bound{Min: min, Max: max, Why: why}
	for _, v := range []string{min, max} {
		if v == "" {
			continue
		}
		if _, err := parse(f, v); err != nil {
			panic(fmt.Sprintf("flagcheck.Range: --%s bound %q: %v", name, v, err))
		}
	}
	if err := fs.SetAnnotation(name, annotation, []string{min, max, why}); err != nil {
		panic(err)
	}
	f.Usage += " (" + b.Text(zero(f)) + ")"
}

// BoundOf is the range declared for f (the zero Bound when none).
func BoundOf(f *pflag.Flag) Bound {
	a := f.Annotations[annotation]
	if len(a) != 3 {
		return Bound{}
	}
	return Bound{Min: a[0], Max: a[1], Why: a[2]}
}

// regionAnnotation marks a flag whose values are AWS region names.
const regionAnnotation = "dynops.region"

// Region declares that fs's flag name (registered just before; a string or
// a list) holds AWS region names: Check refuses a name that no AWS
// partition has (awsconfig.CheckRegion), before any call is sent to it.
func Region(fs *pflag.FlagSet, name string) {
	if fs.Lookup(name) == nil {
		panic("flagcheck.Region: no flag --" + name)
	}
	if err := fs.SetAnnotation(name, regionAnnotation, []string{"true"}); err != nil {
		panic(err)
	}
}

// Check returns an error naming the first flag of fs (set or defaulted) whose
// value is negative or outside its declared range, or that names a region
// no AWS partition has.
func Check(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err == nil {
			err = checkFlag(f, BoundOf(f))
		}
		if err == nil && f.Annotations[regionAnnotation] != nil && f.Changed {
			err = checkRegions(f)
		}
	})
	return err
}

func checkRegions(f *pflag.Flag) error {
	values := []string{f.Value.String()}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		values = sv.GetSlice()
	}
	for _, v := range values {
		if err := awsconfig.CheckRegion(strings.TrimSpace(v), "--"+f.Name); err != nil {
			return err
		}
	}
	return nil
}

// parse reads a value (or a bound) of f in its syntax: seconds of a duration,
// the value of a count; an error for other kinds of flag.
func parse(f *pflag.Flag, v string) (float64, error) {
	switch f.Value.Type() {
	case "duration":
		d, err := time.ParseDuration(v)
		return d.Seconds(), err
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return strconv.ParseFloat(v, 64)
	}
	return 0, fmt.Errorf("a %s flag has no range", f.Value.Type())
}

func zero(f *pflag.Flag) string {
	if f.Value.Type() == "duration" {
		return "0s"
	}
	return "0"
}

func checkFlag(f *pflag.Flag, b Bound) error {
	v, err := parse(f, f.Value.String())
	if err != nil {
		return nil // not a number or duration, or pflag already refused it
	}
	lo, hi := 0.0, 0.0
	if b.Min != "" {
		lo, _ = parse(f, b.Min)
	}
	if b.Max != "" {
		hi, _ = parse(f, b.Max)
	}
	if v < lo || v < 0 || b.Max != "" && v > hi {
		msg := fmt.Sprintf("--%s %s is out of range: use %s", f.Name, f.Value, b.Text(zero(f)))
		if b.Why != "" {
			msg += " (" + b.Why + ")"
		}
		return errors.New(msg)
	}
	return nil
}

// Durations makes every duration flag of fs accept days as well as Go's
// units ("2d", "1d12h", "1.5d": a day is 24 h, as `audit log --since 2d`
// means), and refuse a value that does not parse with one message naming
// the units. Root applies it to every flag of the tree.
func Durations(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(daysValue); !done && f.Value.Type() == "duration" {
			f.Value = daysValue{f.Value}
		}
	})
}

// daysValue is a duration flag's value that takes days.
type daysValue struct{ pflag.Value }

// dayRe is a number of days inside a duration ("2d", the "1d" of "1d12h").
var dayRe = regexp.MustCompile(`(\d+(?:\.\d+)?)d`)

func (v daysValue) Set(s string) error {
	hours := dayRe.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseFloat(strings.TrimSuffix(m, "d"), 64)
		return strconv.FormatFloat(n*24, 'f', -1, 64) + "h"
	})
	if _, err := time.ParseDuration(hours); err != nil {
		return fmt.Errorf("%q is not a duration: write a number and a unit, e.g. 90s, 15m, 2h or 2d (a day is 24h; units combine: 1d12h)", s)
	}
	return v.Value.Set(hours)
}
