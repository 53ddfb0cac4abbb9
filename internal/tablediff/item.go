package tablediff

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// EncodeKey returns the primary key of item as canonical DynamoDB JSON, e.g.
// {"user_id":{"S":"u1"}}: the form `aws dynamodb get-item --key` takes, with
// attribute names sorted, so equal keys give equal bytes. Key attributes are
// S, N or B (DDB-IDX-04).
func EncodeKey(item map[string]types.AttributeValue, keyNames []string) ([]byte, error) {
	m := make(map[string]map[string]string, len(keyNames))
	for _, k := range keyNames {
		switch v := item[k].(type) {
		case *types.AttributeValueMemberS:
			m[k] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			m[k] = map[string]string{"N": v.Value}
		case *types.AttributeValueMemberB:
			m[k] = map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}
		case nil:
			return nil, fmt.Errorf("item has no key attribute %q", k)
		default:
			return nil, fmt.Errorf("key attribute %q is %T, not S, N or B", k, v)
		}
	}
	return json.Marshal(m) // encoding/json sorts map keys: canonical
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
// attrs is empty) that does not depend on map or set order. Two items with
// the same checksum are equal for the diff.
func Checksum(item map[string]types.AttributeValue, attrs []string) string {
	h := sha256.New()
	if len(attrs) > 0 {
		sub := make(map[string]types.AttributeValue, len(attrs))
		for _, a := range attrs {
			if v, ok := lookupAttr(item, a); ok {
				sub[a] = v
			}
		}
		item = sub
	}
	writeMap(h, item)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func writeMap(h hash.Hash, m map[string]types.AttributeValue) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	writeLen(h, len(names))
	for _, k := range names {
		writeBytes(h, []byte(k))
		writeValue(h, m[k])
	}
}

func writeValue(h hash.Hash, v types.AttributeValue) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		h.Write([]byte{'s'})
		writeBytes(h, []byte(v.Value))
	case *types.AttributeValueMemberN:
		h.Write([]byte{'n'})
		writeBytes(h, []byte(v.Value))
	case *types.AttributeValueMemberB:
		h.Write([]byte{'b'})
		writeBytes(h, v.Value)
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			h.Write([]byte{'T'})
		} else {
			h.Write([]byte{'F'})
		}
	case *types.AttributeValueMemberNULL:
		h.Write([]byte{'0'})
	case *types.AttributeValueMemberL:
		h.Write([]byte{'l'})
		writeLen(h, len(v.Value))
		for _, e := range v.Value {
			writeValue(h, e)
		}
	case *types.AttributeValueMemberM:
		h.Write([]byte{'m'})
		writeMap(h, v.Value)
	case *types.AttributeValueMemberSS:
		writeSet(h, 'S', stringsToBytes(v.Value))
	case *types.AttributeValueMemberNS:
		writeSet(h, 'N', stringsToBytes(v.Value))
	case *types.AttributeValueMemberBS:
		writeSet(h, 'B', v.Value)
	default:
		h.Write([]byte{'?'})
		fmt.Fprintf(h, "%T", v)
	}
}

// writeSet hashes set members in sorted order: a set has no order.
func writeSet(h hash.Hash, tag byte, members [][]byte) {
	sorted := append([][]byte(nil), members...)
	sort.Slice(sorted, func(i, j int) bool { return string(sorted[i]) < string(sorted[j]) })
	h.Write([]byte{tag})
	writeLen(h, len(sorted))
	for _, m := range sorted {
		writeBytes(h, m)
	}
}

func writeLen(h hash.Hash, n int) {
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

func writeBytes(h hash.Hash, p []byte) {
	writeLen(h, len(p))
	h.Write(p)
}

func stringsToBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
