package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
)

// imageFields hold item images or message bodies: never logged.
var imageFields = map[string]bool{
	"item": true, "items": true, "image": true, "newimage": true, "oldimage": true,
	"new_image": true, "old_image": true, "body": true, "payload": true, "attributes_values": true,
}

// keyFields hold key values: hashed unless --audit-clear-keys.
var keyFields = map[string]bool{
	"key": true, "keys": true, "exclusive_start_key": true, "last_evaluated_key": true,
	"last_key": true, "start_key": true, "unmatched_sample": true, "samples": true, "sample_keys": true,
}

// textFields hold free text (error messages) that may quote a key: the
// DynamoDB JSON values in them are hashed unless --audit-clear-keys.
var textFields = map[string]bool{"error": true, "err": true, "errors": true, "message": true, "reason": true}

// attributeValue is a scalar DynamoDB JSON value as error texts quote it,
// {"S":"..."}, {"N":"..."} or {"B":"..."}, with escaped quotes inside.
var attributeValue = regexp.MustCompile(`\{\s*\\?"[SNB]\\?"\s*:\s*\\?"(?:[^"\\]|\\.)*?\\?"\s*\}`)

// HashKeysIn replaces every DynamoDB JSON key value in text by its hash
// (see HashValue).
func HashKeysIn(text string) string {
	return attributeValue.ReplaceAllStringFunc(text, func(v string) string { return `"` + HashValue(v) + `"` })
}

// Redacted replaces an item image in a record.
const Redacted = "[redacted: item image]"

// sanitize returns detail as plain JSON values with item images removed and,
// when hashKeys is set, key values replaced by "sha256:<first 16 hex>".
func sanitize(detail any, hashKeys bool) any {
	if detail == nil {
		return nil
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return map[string]string{"unencodable_detail": err.Error()}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return map[string]string{"unencodable_detail": err.Error()}
	}
	return clean(v, hashKeys)
}

func clean(v any, hashKeys bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			lk := strings.ToLower(k)
			switch {
			case imageFields[lk]:
				x[k] = Redacted
			case hashKeys && keyFields[lk]:
				x[k] = hashAll(val)
			case hashKeys && textFields[lk]:
				x[k] = hashText(val)
			default:
				x[k] = clean(val, hashKeys)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = clean(x[i], hashKeys)
		}
		return x
	default:
		return v
	}
}

// hashAll hashes a key, or each key of a list of keys.
func hashAll(v any) any {
	if l, ok := v.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = HashValue(e)
		}
		return out
	}
	if v == nil {
		return nil
	}
	return HashValue(v)
}

// hashText hashes the key values quoted in a text, or in each text of a list.
func hashText(v any) any {
	switch x := v.(type) {
	case string:
		return HashKeysIn(x)
	case []any:
		for i := range x {
			x[i] = hashText(x[i])
		}
		return x
	}
	return clean(v, true)
}

// HashValue is how the audit log writes a key: "sha256:" and the first 16
// hex digits of the SHA-256 of its JSON, so equal keys still match across
// records and runs without the value being in the log.
func HashValue(v any) string {
	raw, _ := json.Marshal(v)
	if s, ok := v.(string); ok {
		raw = []byte(s)
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// imageParams are flags whose values are item images or attribute values
// (dynops item --item, --set, --condition-values): never logged.
var imageParams = map[string]bool{"set": true, "condition-values": true}

// Param is how a flag's value is written to the audit record: an item image
// or attribute values redacted, a key hashed with --audit-hash-keys (the same
// rules as action details), anything else as given.
func Param(name, value string, hashKeys bool) string {
	lk := strings.ToLower(name)
	switch {
	case imageFields[lk], imageParams[lk]:
		return Redacted
	case hashKeys && keyFields[lk] && strings.HasPrefix(strings.TrimSpace(value), "{"):
		return HashValue(value) // a key value (dynops item --key), not a file or key names
	}
	return value
}
