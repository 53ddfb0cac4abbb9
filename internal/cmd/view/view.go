// Package view is the one place a command's output form is chosen, once per
// run, from --output (terraform's internal/command/views, gh's
// pkg/cmd/*/view). A command says what it shows as a small interface, gives
// a human implementation (tables and lines for a terminal) and a JSON one
// (the run's JSON document on stdout), and calls Pick; no command asks
// which form was requested (TestOnlyViewsChooseTheOutputForm holds this).
//
// Commands that show one result use Results; commands that also show
// progress or several results define their own interface and call Pick.
package view

import (
	"fmt"
	"io"

	"github.com/dynops/dynops/internal/cmd/factory"
)

// Pick returns json when the run asked for --output json, human otherwise:
// the only place the output form is decided.
func Pick[V any](f *factory.Factory, human, json V) V {
	if f.Flags.Output == factory.OutputJSON {
		return json
	}
	return human
}

// Result shows a command's one result.
type Result[T any] interface {
	Show(T) error
}

// Human shows a result for a person, on the run's streams.
type Human[T any] func(T) error

// Show calls h.
func (h Human[T]) Show(r T) error { return h(r) }

// JSON shows a result as the run's JSON document (factory.PrintResult: the
// result with the run's throttle counts).
type JSON[T any] struct{ F *factory.Factory }

// Show prints r as the JSON document.
func (j JSON[T]) Show(r T) error { return j.F.PrintResult(r) }

// Results is the view of a command that shows one result: human on a
// terminal, the JSON document under --output json.
func Results[T any](f *factory.Factory, human func(T) error) Result[T] {
	return Pick[Result[T]](f, Human[T](human), JSON[T]{F: f})
}

// Quiet is what a JSON view shows for progress and other lines meant for a
// person: nothing (stdout carries the JSON document only).
func Quiet(string, ...any) {}

// ResultsIn is Results for a command with --output formats of its own
// (factory.OutputFormatsAnnotation: check's sarif and junit): the view
// extra names for the requested format, else Results' human or JSON view.
func ResultsIn[T any](f *factory.Factory, human func(T) error, extra map[string]func(T) error) Result[T] {
	if show, ok := extra[f.Flags.Output]; ok {
		return Human[T](show)
	}
	return Results(f, human)
}

// Printf is how a command prints a line meant for a person on w (a dry
// run's notice, a budget on stderr): fmt.Fprintf on w, and Quiet under
// --output json.
func Printf(f *factory.Factory, w io.Writer) func(format string, args ...any) {
	return Pick[func(string, ...any)](f, func(format string, args ...any) { fmt.Fprintf(w, format, args...) }, Quiet)
}
