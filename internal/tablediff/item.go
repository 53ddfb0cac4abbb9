package tablediff

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// EncodeKey returns the primary key of item as canonical DynamoDB JSON, e.g.
// {"user_id":{"S":"u1"}}: the form `aws dynamodb get-item --key` takes, with
// attribute names sorted, so equal keys give equal bytes. Key attributes are
// S, N or B (DDB-IDX-04).
func EncodeKey(item map[string]types.AttributeValue, keyNames []string) ([]byte, error) {
	return AppendKey(nil, item, keyNames)
}

// AppendKey appends EncodeKey's bytes to dst without building the JSON
// through maps: the same bytes encoding/json writes for the key (names
// sorted, its string escaping), at one append per part.
func AppendKey(dst []byte, item map[string]types.AttributeValue, keyNames []string) ([]byte, error) {
	var names [4]string // a key has one or two attributes
	sorted := append(names[:0], keyNames...)
	if len(sorted) == 2 && sorted[1] < sorted[0] {
		sorted[0], sorted[1] = sorted[1], sorted[0]
	} else if len(sorted) > 2 {
		sort.Strings(sorted)
	}
	dst = append(dst, '{')
	for i, k := range sorted {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		switch v := item[k].(type) {
		case *types.AttributeValueMemberS:
			dst = append(dst, `:{"S":`...)
			dst = appendJSONString(dst, v.Value)
		case *types.AttributeValueMemberN:
			dst = append(dst, `:{"N":`...)
			dst = appendJSONString(dst, v.Value)
		case *types.AttributeValueMemberB:
			dst = append(dst, `:{"B":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, v.Value)
			dst = append(dst, '"')
		case nil:
			return nil, fmt.Errorf("item has no key attribute %q", k)
		default:
			return nil, fmt.Errorf("key attribute %q is %T, not S, N or B", k, v)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// appendJSONString appends s as a JSON string escaped the way encoding/json
// escapes it (HTML-safe: <, > and & as \u003c...; U+2028/U+2029 escaped;
// invalid UTF-8 as \ufffd), so keys keep their earlier bytes.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// DecodeKey turns a key written by EncodeKey back into attribute values.
func DecodeKey(b []byte) (map[string]types.AttributeValue, error) {
	var m map[string]map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding key %s: %w", b, err)
	}
	key := make(map[string]types.AttributeValue, len(m))
	for name, typed := range m {
		if len(typed) != 1 {
			return nil, fmt.Errorf("key attribute %q in %s: want one of S, N, B", name, b)
		}
		for t, v := range typed {
			switch t {
			case "S":
				key[name] = &types.AttributeValueMemberS{Value: v}
			case "N":
				key[name] = &types.AttributeValueMemberN{Value: v}
			case "B":
				raw, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return nil, fmt.Errorf("key attribute %q in %s: %w", name, b, err)
				}
				key[name] = &types.AttributeValueMemberB{Value: raw}
			default:
				return nil, fmt.Errorf("key attribute %q in %s: type %q is not S, N or B", name, b, t)
			}
		}
	}
	return key, nil
}

// Checksum is a digest of an item's attributes (those in attrs, top-level
// names or document paths such as profile.name or tags[0], or all when
// attrs is empty) that does not depend on map or set order, in hex. Two
// items with the same checksum are equal for the diff.
func Checksum(item map[string]types.AttributeValue, attrs []string) string {
	s := Sum(item, attrs)
	return hex.EncodeToString(s[:])
}

// Sum is Checksum's 16 bytes: the first half of a SHA-256 over a canonical
// encoding (names and set members sorted, every value typed and
// length-prefixed). The encoding is built in a pooled buffer and hashed once.
func Sum(item map[string]types.AttributeValue, attrs []string) [16]byte {
	e := encoders.Get().(*encoder)
	e.buf = e.buf[:0]
	if len(attrs) > 0 {
		start := len(e.names)
		sub := make(map[string]types.AttributeValue, len(attrs)) // path -> value
		for _, a := range attrs {
			if _, seen := sub[a]; seen {
				continue
			}
			if v, ok := lookupAttr(item, a); ok {
				sub[a] = v
				e.names = append(e.names, a)
			}
		}
		e.writeNames(sub, start)
	} else {
		e.writeMap(item)
	}
	full := sha256.Sum256(e.buf)
	if cap(e.buf) <= 1<<20 { // do not keep a buffer of one huge item
		encoders.Put(e)
	}
	var s [16]byte
	copy(s[:], full[:16])
	return s
}

// encoder holds the scratch space of Sum; names and members are stacks that
// nested maps and sets push onto and pop.
type encoder struct {
	buf     []byte
	names   []string
	members [][]byte
}

var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 1024)} }}

func (e *encoder) writeMap(m map[string]types.AttributeValue) {
	start := len(e.names)
	for k := range m {
		e.names = append(e.names, k)
	}
	e.writeNames(m, start)
}

// writeNames writes the attributes of m named in e.names[start:], sorted, and pops them.
func (e *encoder) writeNames(m map[string]types.AttributeValue, start int) {
	end := len(e.names)
	slices.Sort(e.names[start:end])
	e.writeLen(end - start)
	for i := start; i < end; i++ {
		k := e.names[i] // re-read: nested maps may grow e.names
		e.writeString(k)
		e.writeValue(m[k])
	}
	clear(e.names[start:])
	e.names = e.names[:start]
}

func (e *encoder) writeValue(v types.AttributeValue) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		e.buf = append(e.buf, 's')
		e.writeString(v.Value)
	case *types.AttributeValueMemberN:
		e.buf = append(e.buf, 'n')
		e.writeString(v.Value)
	case *types.AttributeValueMemberB:
		e.buf = append(e.buf, 'b')
		e.writeLen(len(v.Value))
		e.buf = append(e.buf, v.Value...)
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			e.buf = append(e.buf, 'T')
		} else {
			e.buf = append(e.buf, 'F')
		}
	case *types.AttributeValueMemberNULL:
		e.buf = append(e.buf, '0')
	case *types.AttributeValueMemberL:
		e.buf = append(e.buf, 'l')
		e.writeLen(len(v.Value))
		for _, x := range v.Value {
			e.writeValue(x)
		}
	case *types.AttributeValueMemberM:
		e.buf = append(e.buf, 'm')
		e.writeMap(v.Value)
	case *types.AttributeValueMemberSS:
		e.writeStringSet('S', v.Value)
	case *types.AttributeValueMemberNS:
		e.writeStringSet('N', v.Value)
	case *types.AttributeValueMemberBS:
		start := len(e.members)
		e.members = append(e.members, v.Value...)
		e.writeMembers('B', start)
	default:
		e.buf = append(e.buf, '?')
		e.buf = fmt.Appendf(e.buf, "%T", v)
	}
}

// writeStringSet writes set members in sorted order: a set has no order.
func (e *encoder) writeStringSet(tag byte, members []string) {
	if slices.IsSorted(members) {
		e.buf = append(e.buf, tag)
		e.writeLen(len(members))
		for _, m := range members {
			e.writeString(m)
		}
		return
	}
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	e.writeStringSet(tag, sorted)
}

func (e *encoder) writeMembers(tag byte, start int) {
	ms := e.members[start:]
	slices.SortFunc(ms, bytes.Compare)
	e.buf = append(e.buf, tag)
	e.writeLen(len(ms))
	for _, m := range ms {
		e.writeLen(len(m))
		e.buf = append(e.buf, m...)
	}
	clear(ms)
	e.members = e.members[:start]
}

func (e *encoder) writeLen(n int) { e.buf = binary.AppendUvarint(e.buf, uint64(n)) }

func (e *encoder) writeString(s string) {
	e.writeLen(len(s))
	e.buf = append(e.buf, s...)
}
