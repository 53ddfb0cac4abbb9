// Package item parses the key and value arguments of `dynops item` (DynamoDB
// JSON or plain JSON with inferred types) and builds the expressions of one
// item's read or write with placeholders for every name and value
// (DDB-API-04).
package item

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Format is how an argument was read.
type Format string

// The two formats an argument may take.
const (
	FormatDynamoDB Format = "DynamoDB JSON"
	FormatPlain    Format = "plain JSON"
)

// Parsed is one JSON object argument (--key, --item, --set, ...) as
// attribute values, with what was inferred.
type Parsed struct {
	Attrs  map[string]types.AttributeValue
	Format Format
	// Types is each attribute's DynamoDB type, e.g. "S", "N", "M".
	Types map[string]string
}

// Describe says how the argument was read, e.g.
// `plain JSON, types inferred: id=S, n=N`.
func (p Parsed) Describe() string {
	names := make([]string, 0, len(p.Types))
	for n := range p.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + p.Types[n]
	}
	if p.Format == FormatPlain {
		return "plain JSON, types inferred: " + strings.Join(parts, ", ")
	}
	return "DynamoDB JSON: " + strings.Join(parts, ", ")
}

var typeTags = map[string]bool{"S": true, "N": true, "B": true, "BOOL": true, "NULL": true, "SS": true, "NS": true, "BS": true, "L": true, "M": true}

// Parse reads flag's value: a JSON object in DynamoDB JSON (every top-level
// value one typed value such as {"S": "x"}) or plain JSON (strings are S,
// numbers N, booleans BOOL, null NULL, arrays L, objects M). The whole
// object is one format: a plain object whose values all look typed is read
// as DynamoDB JSON, and the output says which was used.
func Parse(flag, raw string) (Parsed, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &top); err != nil || top == nil {
		return Parsed{}, fmt.Errorf("%s %s: not a JSON object (give e.g. '{\"id\": \"u1\"}' or '{\"id\": {\"S\": \"u1\"}}')", flag, abbrev(raw))
	}
	if len(top) == 0 {
		return Parsed{}, fmt.Errorf("%s: the object is empty: name at least one attribute", flag)
	}
	p := Parsed{Attrs: map[string]types.AttributeValue{}, Types: map[string]string{}, Format: FormatDynamoDB}
	for _, v := range top {
		if !looksTyped(v) {
			p.Format = FormatPlain
			break
		}
	}
	for name, v := range top {
		if name == "" {
			return Parsed{}, fmt.Errorf("%s: an attribute name is empty", flag)
		}
		var av types.AttributeValue
		var err error
		if p.Format == FormatDynamoDB {
			av, err = ddbjson.DecodeValue(v)
		} else {
			av, err = inferValue(v)
		}
		if err != nil {
			return Parsed{}, fmt.Errorf("%s: attribute %q: %w", flag, name, err)
		}
		p.Attrs[name] = av
		p.Types[name] = TypeOf(av)
	}
	return p, nil
}

func looksTyped(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return false
	}
	for k := range m {
		return typeTags[k]
	}
	return false
}

// inferValue reads a plain JSON value as an attribute value.
func inferValue(raw json.RawMessage) (types.AttributeValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fromPlain(v)
}

func fromPlain(v any) (types.AttributeValue, error) {
	switch x := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case string:
		return &types.AttributeValueMemberS{Value: x}, nil
	case json.Number:
		return &types.AttributeValueMemberN{Value: x.String()}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}, nil
	case []any:
		l := make([]types.AttributeValue, len(x))
		for i, e := range x {
			av, err := fromPlain(e)
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		m := make(map[string]types.AttributeValue, len(x))
		for k, e := range x {
			av, err := fromPlain(e)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			m[k] = av
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unsupported JSON value %v", v)
}

// TypeOf is an attribute value's DynamoDB type name.
func TypeOf(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberM:
		return "M"
	}
	return "?"
}

func abbrev(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q...", s[:60])
	}
	return fmt.Sprintf("%q", s)
}
