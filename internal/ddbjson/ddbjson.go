// Package ddbjson converts between DynamoDB JSON (the typed form of exports
// and of the low-level API, {"name": {"S": "v"}}) and the SDK's attribute
// values, measures how many bytes an item takes in a request (this file),
// and scans the lines of exports without encoding/json (lines.go).
package ddbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DecodeItem parses one item in DynamoDB JSON.
func DecodeItem(raw json.RawMessage) (map[string]types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a DynamoDB JSON item: %w", err)
	}
	item := make(map[string]types.AttributeValue, len(m))
	for name, v := range m {
		av, err := DecodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		item[name] = av
	}
	return item, nil
}

// DecodeValue parses one typed value ({"S": "v"}, {"M": {...}}, ...).
func DecodeValue(raw json.RawMessage) (types.AttributeValue, error) {
	var typed map[string]json.RawMessage
	if err := json.Unmarshal(raw, &typed); err != nil || len(typed) != 1 {
		return nil, fmt.Errorf("%s is not one typed DynamoDB JSON value", abbrev(raw))
	}
	for t, v := range typed {
		switch t {
		case "S":
			var s string
			err := json.Unmarshal(v, &s)
			return &types.AttributeValueMemberS{Value: s}, err
		case "N":
			var s string
			err := json.Unmarshal(v, &s)
			return &types.AttributeValueMemberN{Value: s}, err
		case "B":
			var b []byte // encoding/json decodes base64 into []byte
			err := json.Unmarshal(v, &b)
			return &types.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			var b bool
			err := json.Unmarshal(v, &b)
			return &types.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS":
			var ss []string
			err := json.Unmarshal(v, &ss)
			return &types.AttributeValueMemberSS{Value: ss}, err
		case "NS":
			var ss []string
			err := json.Unmarshal(v, &ss)
			return &types.AttributeValueMemberNS{Value: ss}, err
		case "BS":
			var bs [][]byte
			err := json.Unmarshal(v, &bs)
			return &types.AttributeValueMemberBS{Value: bs}, err
		case "L":
			var raws []json.RawMessage
			if err := json.Unmarshal(v, &raws); err != nil {
				return nil, err
			}
			l := make([]types.AttributeValue, len(raws))
			for i, r := range raws {
				av, err := DecodeValue(r)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				l[i] = av
			}
			return &types.AttributeValueMemberL{Value: l}, nil
		case "M":
			m, err := DecodeItem(v)
			return &types.AttributeValueMemberM{Value: m}, err
		default:
			return nil, fmt.Errorf("unknown DynamoDB JSON type %q", t)
		}
	}
	return nil, nil // unreachable: one key
}

func abbrev(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// ItemSize is the number of bytes item takes in a request body as the SDK
// serialises it (JSON 1.0: control characters other than \n, \r, \t, and
// DEL, become six-byte \u00XX escapes; invalid UTF-8 becomes U+FFFD; pinned
// by batchwrite's test against the SDK's own request bodies). A batch is sized by this,
// not by the item's stored size, which can be six times smaller.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 2 // {}
	i := 0
	for name, v := range item {
		if i > 0 {
			n++ // ,
		}
		n += StringSize(name) + 1 + valueSize(v)
		i++
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	const wrap = 1 + 3 + 1 + 1 // {"X":} with a one-letter type
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return wrap + StringSize(v.Value)
	case *types.AttributeValueMemberN:
		return wrap + StringSize(v.Value)
	case *types.AttributeValueMemberB:
		return wrap + 2 + base64.StdEncoding.EncodedLen(len(v.Value))
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return wrap + 3 + 4
		}
		return wrap + 3 + 5
	case *types.AttributeValueMemberNULL:
		return wrap + 3 + 4
	case *types.AttributeValueMemberSS:
		return wrap + 1 + listSize(len(v.Value), func(i int) int { return StringSize(v.Value[i]) })
	case *types.AttributeValueMemberNS:
		return wrap + 1 + listSize(len(v.Value), func(i int) int { return StringSize(v.Value[i]) })
	case *types.AttributeValueMemberBS:
		return wrap + 1 + listSize(len(v.Value), func(i int) int { return 2 + base64.StdEncoding.EncodedLen(len(v.Value[i])) })
	case *types.AttributeValueMemberL:
		return wrap + listSize(len(v.Value), func(i int) int { return valueSize(v.Value[i]) })
	case *types.AttributeValueMemberM:
		return wrap + ItemSize(v.Value)
	}
	return wrap
}

func listSize(n int, size func(int) int) int {
	total := 2 // []
	for i := 0; i < n; i++ {
		if i > 0 {
			total++
		}
		total += size(i)
	}
	return total
}

// StringSize is the length of s as a JSON string (with quotes), escaped as
// smithy-go escapes it.
func StringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == 0x7f:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += 3 // sent as U+FFFD
		case c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// EncodeItem writes item as canonical DynamoDB JSON (names sorted; for tests
// and files).
func EncodeItem(item map[string]types.AttributeValue) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeMap(&b, item); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeMap(b *bytes.Buffer, m map[string]types.AttributeValue) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := encodeValue(b, m[k]); err != nil {
			return fmt.Errorf("attribute %q: %w", k, err)
		}
	}
	b.WriteByte('}')
	return nil
}

func encodeValue(b *bytes.Buffer, v types.AttributeValue) error {
	put := func(t string, x any) error {
		xb, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.WriteString(`{"` + t + `":`)
		b.Write(xb)
		b.WriteByte('}')
		return nil
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return put("S", v.Value)
	case *types.AttributeValueMemberN:
		return put("N", v.Value)
	case *types.AttributeValueMemberB:
		return put("B", v.Value)
	case *types.AttributeValueMemberBOOL:
		return put("BOOL", v.Value)
	case *types.AttributeValueMemberNULL:
		return put("NULL", true)
	case *types.AttributeValueMemberSS:
		return put("SS", v.Value)
	case *types.AttributeValueMemberNS:
		return put("NS", v.Value)
	case *types.AttributeValueMemberBS:
		return put("BS", v.Value)
	case *types.AttributeValueMemberL:
		b.WriteString(`{"L":[`)
		for i, e := range v.Value {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		b.WriteString(`]}`)
		return nil
	case *types.AttributeValueMemberM:
		b.WriteString(`{"M":`)
		if err := encodeMap(b, v.Value); err != nil {
			return err
		}
		b.WriteByte('}')
		return nil
	}
	return fmt.Errorf("unsupported attribute value %T", v)
}

// Micros parses Metadata.WriteTimestampMicros ({"N": "..."}).
func Micros(raw json.RawMessage) (int64, error) {
	var n struct {
		N string `json:"N"`
	}
	if err := json.Unmarshal(raw, &n); err != nil || n.N == "" {
		return 0, fmt.Errorf("WriteTimestampMicros %s is not {\"N\": \"...\"}", abbrev(raw))
	}
	return strconv.ParseInt(n.N, 10, 64)
}
