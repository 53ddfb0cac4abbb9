// Package junit writes `dynops check` findings as a JUnit XML report (the
// Apache Ant schema CI systems read): one test suite per table, one test case
// per table x rule. A case fails when any of the rule's findings on the table
// (the table, an index, a replica, a consumer) fails, and the failure lists
// them; a case whose only non-passing findings are exceptions is skipped
// with the reasons. Rules that produced no finding on a table (an index rule
// on a table without indexes) have no case.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dynops/dynops/internal/guideline"
)

// TestSuites is the report's root element.
type TestSuites struct {
	XMLName xml.Name    `xml:"testsuites"`
	Suites  []TestSuite `xml:"testsuite"`
}

// TestSuite is one table.
type TestSuite struct {
	Name       string     `xml:"name,attr"`
	Package    string     `xml:"package,attr"`
	ID         int        `xml:"id,attr"`
	Timestamp  string     `xml:"timestamp,attr"`
	Hostname   string     `xml:"hostname,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Time       string     `xml:"time,attr"`
	Properties Properties `xml:"properties"`
	Cases      []TestCase `xml:"testcase"`
	SystemOut  string     `xml:"system-out"`
	SystemErr  string     `xml:"system-err"`
}

// Properties of a suite.
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is a name and value.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// TestCase is one rule on one table.
type TestCase struct {
	Name      string   `xml:"name,attr"`
	ClassName string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Skipped   *Outcome `xml:"skipped,omitempty"`
	Failure   *Outcome `xml:"failure,omitempty"`
}

// Outcome is a failure or a skip, with its message and details.
type Outcome struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Package is the package attribute of every suite.
const Package = "dynops.check"

// Build returns the report of findings over tables, checked at at on host.
func Build(tables []string, findings []guideline.Finding, at time.Time, host string) TestSuites {
	byTable := map[string][]guideline.Finding{}
	for _, f := range findings {
		byTable[f.Table] = append(byTable[f.Table], f)
	}
	out := TestSuites{Suites: []TestSuite{}}
	for i, t := range tables {
		s := TestSuite{Name: t, Package: Package, ID: i, Timestamp: at.UTC().Format("2006-01-02T15:04:05"), Hostname: host, Time: "0"}
		byRule := map[string][]guideline.Finding{}
		var rules []string
		for _, f := range byTable[t] {
			if _, ok := byRule[f.Rule]; !ok {
				rules = append(rules, f.Rule)
			}
			byRule[f.Rule] = append(byRule[f.Rule], f)
		}
		for _, rule := range rules {
			c := testCase(t, rule, byRule[rule])
			s.Tests++
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Properties.Property = []Property{{Name: "guideline", Value: guideline.GuidelineFile}}
		out.Suites = append(out.Suites, s)
	}
	return out
}

func testCase(table, rule string, fs []guideline.Finding) TestCase {
	title := rule
	if r, ok := guideline.RuleByID(rule); ok {
		title += " " + r.Title
	}
	c := TestCase{Name: title, ClassName: table, Time: "0"}
	var failed, excepted []string
	sev := guideline.Info
	for _, f := range fs {
		switch f.Status {
		case guideline.Fail:
			failed = append(failed, f.Resource+": "+f.Message)
			if rank(f.Severity) > rank(sev) {
				sev = f.Severity
			}
		case guideline.Exception:
			excepted = append(excepted, f.Resource+": exception: "+f.Reason)
		}
	}
	sort.Strings(failed)
	sort.Strings(excepted)
	detail := func(lines []string) string {
		return strings.Join(lines, "\n") + "\n" + guideline.DocLink(rule) + controls(rule)
	}
	switch {
	case len(failed) > 0:
		c.Failure = &Outcome{Type: string(sev), Message: fmt.Sprintf("%s fails on %d resource(s) (%s)", rule, len(failed), sev), Text: detail(append(failed, excepted...))}
	case len(excepted) > 0:
		c.Skipped = &Outcome{Message: rule + ": exception recorded", Text: detail(excepted)}
	}
	return c
}

func controls(rule string) string {
	ids := guideline.ControlIDs(rule)
	if len(ids) == 0 {
		return ""
	}
	return "\ncovers: " + strings.Join(ids, ", ")
}

func rank(s guideline.Severity) int {
	switch s {
	case guideline.Error:
		return 2
	case guideline.Warning:
		return 1
	}
	return 0
}

// Write writes the report to w.
func Write(w io.Writer, tables []string, findings []guideline.Finding, at time.Time, host string) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(Build(tables, findings, at, host)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
