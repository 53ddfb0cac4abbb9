package item

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Schema is a table's (or index's) key: hash name and type, and the range
// key's when there is one.
type Schema struct {
	Hash, HashType   string
	Range, RangeType string
}

// Names are the key attribute names.
func (s Schema) Names() []string {
	if s.Range == "" {
		return []string{s.Hash}
	}
	return []string{s.Hash, s.Range}
}

func (s Schema) String() string {
	if s.Range == "" {
		return fmt.Sprintf("%s (%s)", s.Hash, s.HashType)
	}
	return fmt.Sprintf("%s (%s), %s (%s)", s.Hash, s.HashType, s.Range, s.RangeType)
}

// CheckKey refuses a key that is not exactly the table's key attributes
// with their types.
func (s Schema) CheckKey(flag string, key map[string]types.AttributeValue) error {
	want := map[string]string{s.Hash: s.HashType}
	if s.Range != "" {
		want[s.Range] = s.RangeType
	}
	for name, av := range key {
		t, ok := want[name]
		if !ok {
			return fmt.Errorf("%s: %q is not a key attribute of the table (its key: %s)", flag, name, s)
		}
		if got := TypeOf(av); got != t {
			return fmt.Errorf("%s: %q is %s, the table's key needs %s (in plain JSON write numbers unquoted, or use DynamoDB JSON such as {\"%s\": {\"%s\": ...}})", flag, name, got, t, name, t)
		}
	}
	for name := range want {
		if _, ok := key[name]; !ok {
			return fmt.Errorf("%s: the key attribute %q is missing (the table's key: %s)", flag, name, s)
		}
	}
	return nil
}

// CheckItem refuses an item without the key attributes with their types.
func (s Schema) CheckItem(flag string, item map[string]types.AttributeValue) error {
	return s.CheckKey(flag, KeyOf(s, item))
}

// KeyOf is the key part of item (the key attributes it has).
func KeyOf(s Schema, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{}
	for _, n := range s.Names() {
		if v, ok := item[n]; ok {
			k[n] = v
		}
	}
	return k
}

// Update is an UpdateExpression with its placeholders: SET of whole
// top-level attributes and REMOVE of others. Names are attribute names taken
// literally: a dot or a reserved word is part of the name, never a path.
type Update struct {
	Expr   string
	Names  map[string]string
	Values map[string]types.AttributeValue
}

// BuildUpdate builds SET #s0 = :s0, ... REMOVE #r0, ... and refuses key
// attributes (DynamoDB cannot change a key) and a name in both.
func BuildUpdate(s Schema, set map[string]types.AttributeValue, remove []string) (Update, error) {
	if len(set) == 0 && len(remove) == 0 {
		return Update{}, fmt.Errorf("nothing to update: give --set '{\"attr\": value}' and/or --remove ATTR")
	}
	keys := map[string]bool{}
	for _, n := range s.Names() {
		keys[n] = true
	}
	u := Update{Names: map[string]string{}, Values: map[string]types.AttributeValue{}}
	names := sortedNames(set)
	var sets, removes []string
	for i, n := range names {
		if keys[n] {
			return Update{}, fmt.Errorf("--set: %q is a key attribute: a key cannot be updated (put the new item and delete the old one)", n)
		}
		ph := fmt.Sprintf("#s%d", i)
		u.Names[ph] = n
		u.Values[fmt.Sprintf(":s%d", i)] = set[n]
		sets = append(sets, fmt.Sprintf("%s = :s%d", ph, i))
	}
	for i, n := range remove {
		if n == "" {
			return Update{}, fmt.Errorf("--remove: an attribute name is empty")
		}
		if keys[n] {
			return Update{}, fmt.Errorf("--remove: %q is a key attribute: a key cannot be removed", n)
		}
		if _, ok := set[n]; ok {
			return Update{}, fmt.Errorf("--remove %q: it is also in --set", n)
		}
		ph := fmt.Sprintf("#r%d", i)
		u.Names[ph] = n
		removes = append(removes, ph)
	}
	var parts []string
	if len(sets) > 0 {
		parts = append(parts, "SET "+strings.Join(sets, ", "))
	}
	if len(removes) > 0 {
		parts = append(parts, "REMOVE "+strings.Join(removes, ", "))
	}
	u.Expr = strings.Join(parts, " ")
	if len(u.Values) == 0 {
		u.Values = nil
	}
	return u, nil
}

// Apply is what the update does to before: the after image the write should
// produce (for the dry run).
func (u Update) Apply(before, set map[string]types.AttributeValue, remove []string) map[string]types.AttributeValue {
	after := make(map[string]types.AttributeValue, len(before)+len(set))
	for k, v := range before {
		after[k] = v
	}
	for k, v := range set {
		after[k] = v
	}
	for _, k := range remove {
		delete(after, k)
	}
	return after
}

// Projection is a ProjectionExpression of top-level attribute names, each a
// placeholder.
func Projection(attrs []string) (string, map[string]string, error) {
	names := map[string]string{}
	phs := make([]string, len(attrs))
	for i, a := range attrs {
		if a == "" {
			return "", nil, fmt.Errorf("--attributes: an attribute name is empty")
		}
		ph := fmt.Sprintf("#p%d", i)
		names[ph] = a
		phs[i] = ph
	}
	return strings.Join(phs, ", "), names, nil
}

// Hash is an item image's fingerprint: "sha256:" and the first 16 hex digits
// of the SHA-256 of its canonical DynamoDB JSON; "absent" for no item. The
// dry run prints it; --if-hash makes the write wait for the same image.
func Hash(image map[string]types.AttributeValue) string {
	if image == nil {
		return "absent"
	}
	raw, err := ddbjson.EncodeItem(image)
	if err != nil {
		return "unencodable"
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// CheckHash checks a hash given back to dynops (--if-hash): "absent", or
// "sha256:" and 16 lower-case hex digits, as Hash writes it.
func CheckHash(h string) error {
	digits, ok := strings.CutPrefix(h, "sha256:")
	if h == "absent" {
		return nil
	}
	if ok && len(digits) == 16 {
		if _, err := hex.DecodeString(digits); err == nil && strings.ToLower(digits) == digits {
			return nil
		}
	}
	return fmt.Errorf("%q is not an item hash: give \"absent\" or sha256: and 16 lower-case hex digits, as item get and the dry run print it (e.g. sha256:0123456789abcdef)", h)
}

func sortedNames(m map[string]types.AttributeValue) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
