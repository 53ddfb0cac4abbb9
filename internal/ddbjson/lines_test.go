package ddbjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toJSON is a reference encoder of DynamoDB JSON through encoding/json.
func toJSON(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		var s []string
		for _, b := range v.Value {
			s = append(s, base64.StdEncoding.EncodeToString(b))
		}
		return map[string]any{"BS": s}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": mapJSON(v.Value)}
	case *types.AttributeValueMemberL:
		l := []any{}
		for _, e := range v.Value {
			l = append(l, toJSON(e))
		}
		return map[string]any{"L": l}
	}
	panic(fmt.Sprintf("%T", v))
}

func mapJSON(m map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = toJSON(v)
	}
	return out
}

func randomItem(rnd *rand.Rand, depth int) map[string]types.AttributeValue {
	texts := []string{"", "plain", `q"uote`, `back\slash`, "tab\tline\n", "日本語", "emoji 😀", "<&>", "\u2028", "\x01ctl"}
	txt := func() string { return texts[rnd.IntN(len(texts))] }
	m := map[string]types.AttributeValue{}
	for i := rnd.IntN(7); i >= 0; i-- {
		var v types.AttributeValue
		switch rnd.IntN(10) {
		case 0:
			v = &types.AttributeValueMemberS{Value: txt()}
		case 1:
			v = &types.AttributeValueMemberN{Value: fmt.Sprint(rnd.IntN(1e6) - 5e5)}
		case 2:
			v = &types.AttributeValueMemberB{Value: []byte(txt())}
		case 3:
			v = &types.AttributeValueMemberBOOL{Value: rnd.IntN(2) == 0}
		case 4:
			v = &types.AttributeValueMemberNULL{Value: true}
		case 5:
			v = &types.AttributeValueMemberSS{Value: []string{txt(), "x"}}
		case 6:
			v = &types.AttributeValueMemberNS{Value: []string{"1", "2.5", "-3e10"}}
		case 7:
			v = &types.AttributeValueMemberBS{Value: [][]byte{{0, 1}, []byte(txt())}}
		case 8:
			if depth < 3 {
				v = &types.AttributeValueMemberM{Value: randomItem(rnd, depth+1)}
			} else {
				v = &types.AttributeValueMemberS{Value: "leaf"}
			}
		default:
			l := []types.AttributeValue{}
			if depth < 3 {
				for k := range randomItem(rnd, depth+1) {
					l = append(l, &types.AttributeValueMemberS{Value: k})
				}
			}
			v = &types.AttributeValueMemberL{Value: l}
		}
		m[fmt.Sprintf("%s%d", txt(), i)] = v
	}
	return m
}

func TestDecodeRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 2000; i++ {
		item := randomItem(rnd, 0)
		item["id"] = &types.AttributeValueMemberS{Value: fmt.Sprint(i)}
		full, err := json.Marshal(map[string]any{"Item": mapJSON(item)})
		require.NoError(t, err)
		l, err := Decode(full)
		require.NoError(t, err, "%s", full)
		require.Equal(t, item, l.Item, "%s", full)
		require.NoError(t, Check(full))

		keys := map[string]types.AttributeValue{"id": item["id"]}
		incr, err := json.Marshal(map[string]any{"Metadata": map[string]any{"WriteTimestampMicros": map[string]string{"N": "1"}},
			"Keys": mapJSON(keys), "NewImage": mapJSON(item)})
		require.NoError(t, err)
		l, err = Decode(incr)
		require.NoError(t, err, "%s", incr)
		assert.Equal(t, keys, l.Keys)
		assert.Equal(t, item, l.NewImage)
		assert.Nil(t, l.OldImage)
	}
}

func TestCheckRefusesWhatIsNotDynamoDBJSON(t *testing.T) {
	cases := map[string]struct{ line, err string }{
		"not JSON":               {`hello`, "invalid JSON"},
		"truncated":              {`{"Item":{"id":{"S":"a"}}`, "invalid JSON"},
		"text after":             {`{"Item":{"id":{"S":"a"}}} x`, "text after"},
		"empty object":           {`{}`, "neither"},
		"empty item":             {`{"Item":{}}`, "neither"},
		"only metadata":          {`{"Metadata":{"x":1}}`, "neither"},
		"untyped attribute":      {`{"Item":{"id":"a"}}`, `attribute "id" is not one typed`},
		"two types":              {`{"Item":{"id":{"S":"a","N":"1"}}}`, `attribute "id" is not one typed`},
		"no type":                {`{"Item":{"id":{}}}`, `attribute "id" is not one typed`},
		"unknown type":           {`{"Item":{"id":{"STR":"a"}}}`, `unknown type "STR"`},
		"bad nested type":        {`{"Item":{"m":{"M":{"x":{"Q":1}}}}}`, `unknown type "Q"`},
		"bad string escape":      {`{"Item":{"id":{"S":"a\q"}}}`, "bad escape"},
		"control char in string": {"{\"Item\":{\"id\":{\"S\":\"a\x01\"}}}", "control character"},
		"bad number in metadata": {`{"Metadata":{"n":01},"Keys":{"id":{"S":"a"}}}`, "invalid JSON"},
		"keys not an object":     {`{"Keys":5}`, "invalid JSON"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, Check([]byte(c.line)), c.err)
			_, err := Decode([]byte(c.line))
			assert.ErrorContains(t, err, c.err)
		})
	}
}

func TestLineDecodeRefusesBadValues(t *testing.T) {
	for _, line := range []string{
		`{"Item":{"b":{"B":"not base64!"}}}`,
		`{"Item":{"b":{"BOOL":"yes"}}}`,
		`{"Item":{"b":{"NULL":false}}}`,
		`{"Item":{"b":{"SS":"a"}}}`,
		`{"Item":{"b":{"SS":[1]}}}`,
		`{"Item":{"b":{"M":null}}}`,
	} {
		_, err := Decode([]byte(line))
		assert.Error(t, err, line)
	}
}
