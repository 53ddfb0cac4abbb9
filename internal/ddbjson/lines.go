// The lines of DynamoDB exports: a hand-written scanner of DynamoDB JSON
// lines (Check, Decode), for verify and the export-based diff.

package ddbjson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Line is one decoded export line: Item for a full export; Keys, NewImage
// and OldImage (either may be nil) for an incremental one.
type Line struct {
	Item, Keys, NewImage, OldImage map[string]types.AttributeValue
}

// Check validates one line: a JSON object with a non-empty "Item" (full
// export) or "Keys" (incremental export) whose attributes, like those of
// "NewImage" and "OldImage", are typed DynamoDB JSON values. Other members
// (e.g. "Metadata") must be valid JSON.
func Check(b []byte) error {
	p := parser{b: b}
	_, err := p.line(false)
	return err
}

// Decode validates one line as Check does and returns its attribute values.
func Decode(b []byte) (Line, error) {
	p := parser{b: b, build: true}
	return p.line(true)
}

type parser struct {
	b     []byte
	i     int
	build bool
	depth int
}

const maxDepth = 10000 // encoding/json's nesting limit

var errNeither = errors.New(`neither "Item" (full export) nor "Keys" (incremental export)`)

func (p *parser) line(build bool) (Line, error) {
	var l Line
	var itemN, keysN int
	p.ws()
	if err := p.expect('{'); err != nil {
		return l, err
	}
	p.ws()
	if p.peek() == '}' {
		p.i++
	} else {
		for {
			p.ws()
			name, err := p.str()
			if err != nil {
				return l, err
			}
			p.ws()
			if err := p.expect(':'); err != nil {
				return l, err
			}
			p.ws()
			var target *map[string]types.AttributeValue
			var count *int
			switch name {
			case "Item":
				target, count = &l.Item, &itemN
			case "Keys":
				target, count = &l.Keys, &keysN
			case "NewImage":
				target = &l.NewImage
			case "OldImage":
				target = &l.OldImage
			}
			if target == nil {
				if err := p.skip(); err != nil {
					return l, err
				}
			} else {
				m, n, err := p.attrMap()
				if err != nil {
					return l, err
				}
				*target = m
				if count != nil {
					*count = n
				}
			}
			p.ws()
			if p.peek() == ',' {
				p.i++
				continue
			}
			if err := p.expect('}'); err != nil {
				return l, err
			}
			break
		}
	}
	p.ws()
	if p.i != len(p.b) {
		return l, p.errf("text after the object")
	}
	if itemN == 0 && keysN == 0 {
		return l, errNeither
	}
	return l, nil
}

// attrMap reads an object of attributes (or null) and returns it when
// building, and its number of attributes.
func (p *parser) attrMap() (map[string]types.AttributeValue, int, error) {
	if p.literal("null") {
		return nil, 0, nil
	}
	if err := p.enter(); err != nil {
		return nil, 0, err
	}
	defer p.leave()
	if err := p.expect('{'); err != nil {
		return nil, 0, err
	}
	var m map[string]types.AttributeValue
	if p.build {
		m = map[string]types.AttributeValue{}
	}
	n := 0
	p.ws()
	if p.peek() == '}' {
		p.i++
		return m, 0, nil
	}
	for {
		p.ws()
		name, err := p.str()
		if err != nil {
			return nil, n, err
		}
		p.ws()
		if err := p.expect(':'); err != nil {
			return nil, n, err
		}
		p.ws()
		v, err := p.attrValue(name)
		if err != nil {
			return nil, n, err
		}
		if m != nil {
			m[name] = v
		}
		n++
		p.ws()
		if p.peek() == ',' {
			p.i++
			continue
		}
		return m, n, p.expect('}')
	}
}

// attrValue reads one typed value: an object with exactly one member whose
// name is a DynamoDB type.
func (p *parser) attrValue(name string) (types.AttributeValue, error) {
	if p.peek() != '{' {
		if err := p.skip(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("attribute %q is not one typed DynamoDB JSON value", name)
	}
	p.i++
	p.ws()
	if p.peek() == '}' {
		return nil, fmt.Errorf("attribute %q is not one typed DynamoDB JSON value", name)
	}
	typ, err := p.str()
	if err != nil {
		return nil, err
	}
	p.ws()
	if err := p.expect(':'); err != nil {
		return nil, err
	}
	p.ws()
	var v types.AttributeValue
	switch typ {
	case "S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL":
		if v, err = p.typed(name, typ); err != nil {
			return nil, err
		}
	default:
		if err := p.skip(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("attribute %q has unknown type %q", name, typ)
	}
	p.ws()
	if p.peek() == ',' {
		return nil, fmt.Errorf("attribute %q is not one typed DynamoDB JSON value", name)
	}
	return v, p.expect('}')
}

func (p *parser) typed(name, typ string) (types.AttributeValue, error) {
	if !p.build && typ != "M" && typ != "L" {
		return nil, p.skip() // Check: the type is known, the value valid JSON
	}
	bad := func() error { return fmt.Errorf("attribute %q: not a valid %s value", name, typ) }
	switch typ {
	case "S", "N":
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		if typ == "S" {
			return &types.AttributeValueMemberS{Value: s}, nil
		}
		return &types.AttributeValueMemberN{Value: s}, nil
	case "B":
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, bad()
		}
		return &types.AttributeValueMemberB{Value: raw}, nil
	case "BOOL", "NULL":
		switch {
		case p.literal("true"):
			if typ == "NULL" {
				return &types.AttributeValueMemberNULL{Value: true}, nil
			}
			return &types.AttributeValueMemberBOOL{Value: true}, nil
		case p.literal("false") && typ == "BOOL":
			return &types.AttributeValueMemberBOOL{Value: false}, nil
		}
		return nil, bad()
	case "SS", "NS", "BS":
		var ss []string
		var bs [][]byte
		err := p.array(func() error {
			s, err := p.str()
			if err != nil {
				return err
			}
			if typ == "BS" {
				raw, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return bad()
				}
				bs = append(bs, raw)
			} else {
				ss = append(ss, s)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		switch typ {
		case "SS":
			return &types.AttributeValueMemberSS{Value: ss}, nil
		case "NS":
			return &types.AttributeValueMemberNS{Value: ss}, nil
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	case "M":
		m, _, err := p.attrMap()
		if err != nil {
			return nil, err
		}
		if p.build && m == nil {
			return nil, bad()
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case "L":
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		var l []types.AttributeValue
		err := p.array(func() error {
			v, err := p.attrValue(name)
			if p.build {
				l = append(l, v)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if p.build && l == nil {
			l = []types.AttributeValue{}
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	}
	return nil, bad()
}

// array reads [e, e, ...] calling elem at each element.
func (p *parser) array(elem func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	p.ws()
	if p.peek() == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if err := elem(); err != nil {
			return err
		}
		p.ws()
		if p.peek() == ',' {
			p.i++
			continue
		}
		return p.expect(']')
	}
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errf("nested too deep")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// skip validates and skips any JSON value.
func (p *parser) skip() error {
	switch c := p.peek(); {
	case c == '{':
		if err := p.enter(); err != nil {
			return err
		}
		defer p.leave()
		p.i++
		p.ws()
		if p.peek() == '}' {
			p.i++
			return nil
		}
		for {
			p.ws()
			if _, err := p.rawStr(); err != nil {
				return err
			}
			p.ws()
			if err := p.expect(':'); err != nil {
				return err
			}
			p.ws()
			if err := p.skip(); err != nil {
				return err
			}
			p.ws()
			if p.peek() == ',' {
				p.i++
				continue
			}
			return p.expect('}')
		}
	case c == '[':
		if err := p.enter(); err != nil {
			return err
		}
		defer p.leave()
		return p.array(p.skip)
	case c == '"':
		_, err := p.rawStr()
		return err
	case c == 't':
		return p.must("true")
	case c == 'f':
		return p.must("false")
	case c == 'n':
		return p.must("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return p.errf("unexpected %s", p.what())
}

func (p *parser) number() error {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return p.errf("bad number")
	}
	if p.peek() == '.' {
		p.i++
		if d := p.digits(); d == 0 {
			return p.errf("bad number")
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if d := p.digits(); d == 0 {
			return p.errf("bad number")
		}
	}
	if p.i == start {
		return p.errf("bad number")
	}
	return nil
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// str reads a string and returns its value.
func (p *parser) str() (string, error) {
	raw, err := p.rawStr()
	if err != nil {
		return "", err
	}
	return unquote(raw)
}

// rawStr validates a string and returns it with its quotes; it allocates nothing.
func (p *parser) rawStr() ([]byte, error) {
	if p.peek() != '"' {
		return nil, p.errf("expected a string, found %s", p.what())
	}
	start := p.i
	p.i++
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start:p.i], nil
		case c == '\\':
			p.i++
			switch p.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+5 > len(p.b) {
					return nil, p.errf("bad \\u escape")
				}
				for _, h := range p.b[p.i+1 : p.i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, p.errf("bad \\u escape")
					}
				}
				p.i += 5
			default:
				return nil, p.errf("bad escape")
			}
		case c < 0x20:
			return nil, p.errf("control character in a string")
		default:
			p.i++
		}
	}
	return nil, p.errf("unterminated string")
}

// unquote returns the value of a validated JSON string.
func unquote(raw []byte) (string, error) {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", err
			}
			return s, nil
		}
	}
	return string(inner), nil
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return p.errf("expected %q, found %s", c, p.what())
	}
	p.i++
	return nil
}

func (p *parser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

func (p *parser) must(s string) error {
	if !p.literal(s) {
		return p.errf("unexpected %s", p.what())
	}
	return nil
}

func (p *parser) what() string {
	if p.i >= len(p.b) {
		return "the end of the line"
	}
	return strconv.QuoteRune(rune(p.b[p.i]))
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", p.i+1, fmt.Sprintf(format, args...))
}
