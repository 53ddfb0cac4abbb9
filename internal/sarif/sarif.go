// Package sarif writes `dynops check` findings as a SARIF 2.1.0 log, the
// format code-scanning UIs (GitHub code scanning, Azure DevOps, ...) read.
//
// One reportingDescriptor per guideline rule (help text: the rule's section
// of docs/guideline.md; tags: its external controls). One result per failing
// finding and per exception (suppressed, with the exception's reason);
// passing findings are left out, so a fixed finding closes in the UI. A
// result's location is the resource's ARN: as physicalLocation's
// artifactLocation uri (GitHub code scanning requires a non-empty uri) and as
// a logicalLocation; partialFingerprints keep one alert per rule and resource
// across runs.
package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"

	"github.com/dynops/dynops/internal/guideline"
)

// Version and Schema of the log written.
const (
	Version = "2.1.0"
	Schema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// Log is a SARIF log (the subset dynops writes).
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of a tool.
type Run struct {
	Tool    Tool     `json:"tool"`
	Results []Result `json:"results"`
}

// Tool describes dynops and its rules.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool component that ran.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Message is a plain-text (and optional markdown) message.
type Message struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// Rule is a reportingDescriptor.
type Rule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     Message        `json:"shortDescription"`
	FullDescription      Message        `json:"fullDescription"`
	Help                 Message        `json:"help"`
	DefaultConfiguration Configuration  `json:"defaultConfiguration"`
	Properties           RuleProperties `json:"properties"`
}

// Configuration of a rule.
type Configuration struct {
	Level string `json:"level"`
}

// RuleProperties are a rule's property bag.
type RuleProperties struct {
	Tags []string `json:"tags,omitempty"`
}

// Result is one finding.
type Result struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             Message           `json:"message"`
	Locations           []Location        `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Suppressions        []Suppression     `json:"suppressions,omitempty"`
	Properties          ResultProperties  `json:"properties"`
}

// ResultProperties are a result's property bag.
type ResultProperties struct {
	Table    string              `json:"table"`
	Resource string              `json:"resource"`
	Status   guideline.Status    `json:"status"`
	Controls []guideline.Control `json:"controls,omitempty"`
}

// Suppression records an approved exception.
type Suppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// Location of a result.
type Location struct {
	PhysicalLocation PhysicalLocation  `json:"physicalLocation"`
	LogicalLocations []LogicalLocation `json:"logicalLocations"`
}

// PhysicalLocation names the artifact.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
}

// ArtifactLocation is the resource's URI.
type ArtifactLocation struct {
	URI string `json:"uri"`
}

// LogicalLocation is the resource by name.
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// FingerprintKey names dynops's partial fingerprint (rule and Finding.Key).
const FingerprintKey = "dynopsResource/v1"

// Level returns the SARIF level of a severity.
func Level(s guideline.Severity) string {
	switch s {
	case guideline.Error:
		return "error"
	case guideline.Warning:
		return "warning"
	default:
		return "note"
	}
}

// Build returns the log of findings, made by dynops at version.
func Build(version string, findings []guideline.Finding) Log {
	d := Driver{Name: "dynops", Version: version, Rules: []Rule{}}
	index := map[string]int{}
	for i, r := range guideline.Rules() {
		index[r.ID] = i
		help := guideline.RuleHelp(r.ID)
		tags := append([]string{"dynamodb", "guideline"}, guideline.ControlIDs(r.ID)...)
		d.Rules = append(d.Rules, Rule{
			ID:                   r.ID,
			Name:                 r.ID,
			ShortDescription:     Message{Text: r.Title},
			FullDescription:      Message{Text: help},
			Help:                 Message{Text: help + " (" + guideline.DocLink(r.ID) + ")"},
			DefaultConfiguration: Configuration{Level: Level(r.Severity)},
			Properties:           RuleProperties{Tags: tags},
		})
	}
	results := []Result{}
	for _, f := range findings {
		if f.Status == guideline.Pass {
			continue
		}
		uri := f.ARN
		if uri == "" {
			uri = f.Resource
		}
		sum := sha256.Sum256([]byte(f.Rule + "\x00" + f.Key()))
		res := Result{
			RuleID:    f.Rule,
			RuleIndex: index[f.Rule],
			Level:     Level(f.Severity),
			Message:   Message{Text: f.Resource + ": " + f.Message},
			Locations: []Location{{
				PhysicalLocation: PhysicalLocation{ArtifactLocation: ArtifactLocation{URI: uri}},
				LogicalLocations: []LogicalLocation{{Name: f.Resource, FullyQualifiedName: uri, Kind: "resource"}},
			}},
			PartialFingerprints: map[string]string{FingerprintKey: hex.EncodeToString(sum[:])},
			Properties:          ResultProperties{Table: f.Table, Resource: f.Resource, Status: f.Status, Controls: f.Controls},
		}
		if f.Status == guideline.Exception {
			res.Suppressions = []Suppression{{Kind: "external", Status: "accepted", Justification: f.Reason}}
		}
		results = append(results, res)
	}
	return Log{Schema: Schema, Version: Version, Runs: []Run{{Tool: Tool{Driver: d}, Results: results}}}
}

// Write writes the log of findings to w as indented JSON.
func Write(w io.Writer, version string, findings []guideline.Finding) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Build(version, findings))
}
