package tablediff

// The checksum as it was first written (hash.Hash writes, one allocation per
// value): the optimised Sum must feed SHA-256 the very same bytes, so keys
// files written before stay valid for repair.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Checksum is a digest of an item's attributes (those in attrs, or all when
// attrs is empty) that does not depend on map or set order. Two items with
// the same checksum are equal for the diff.
func refChecksum(item map[string]types.AttributeValue, attrs []string) string {
	h := sha256.New()
	if len(attrs) > 0 {
		sub := make(map[string]types.AttributeValue, len(attrs))
		for _, a := range attrs {
			if v, ok := item[a]; ok {
				sub[a] = v
			}
		}
		item = sub
	}
	refWriteMap(h, item)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func refWriteMap(h hash.Hash, m map[string]types.AttributeValue) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	refWriteLen(h, len(names))
	for _, k := range names {
		refWriteBytes(h, []byte(k))
		refWriteValue(h, m[k])
	}
}

func refWriteValue(h hash.Hash, v types.AttributeValue) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		h.Write([]byte{'s'})
		refWriteBytes(h, []byte(v.Value))
	case *types.AttributeValueMemberN:
		h.Write([]byte{'n'})
		refWriteBytes(h, []byte(v.Value))
	case *types.AttributeValueMemberB:
		h.Write([]byte{'b'})
		refWriteBytes(h, v.Value)
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
		refWriteLen(h, len(v.Value))
		for _, e := range v.Value {
			refWriteValue(h, e)
		}
	case *types.AttributeValueMemberM:
		h.Write([]byte{'m'})
		refWriteMap(h, v.Value)
	case *types.AttributeValueMemberSS:
		refWriteSet(h, 'S', refStringsToBytes(v.Value))
	case *types.AttributeValueMemberNS:
		refWriteSet(h, 'N', refStringsToBytes(v.Value))
	case *types.AttributeValueMemberBS:
		refWriteSet(h, 'B', v.Value)
	default:
		h.Write([]byte{'?'})
		fmt.Fprintf(h, "%T", v)
	}
}

// writeSet hashes set members in sorted order: a set has no order.
func refWriteSet(h hash.Hash, tag byte, members [][]byte) {
	sorted := append([][]byte(nil), members...)
	sort.Slice(sorted, func(i, j int) bool { return string(sorted[i]) < string(sorted[j]) })
	h.Write([]byte{tag})
	refWriteLen(h, len(sorted))
	for _, m := range sorted {
		refWriteBytes(h, m)
	}
}

func refWriteLen(h hash.Hash, n int) {
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

func refWriteBytes(h hash.Hash, p []byte) {
	refWriteLen(h, len(p))
	h.Write(p)
}

func refStringsToBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
