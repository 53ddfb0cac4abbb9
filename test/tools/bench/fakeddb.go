package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// fakeDynamoDB serves DescribeTable and segmented Scan (DynamoDB JSON 1.0)
// of two tables of n items each, the bench's user items (fixture.Users'
// shape, ~200 bytes), in pages of up to 1 MB: TABLE-restored, and TABLE with
// every 100th item's status changed. It answers as fast as the client reads,
// so `bench -memory -fake` measures dynops's memory at 1x and 10x in seconds,
// with every page going through the real SDK's HTTP and decoding path, and
// with all segments' pages in flight at once (on moto they queue).
type fakeDynamoDB struct {
	n   int
	srv *http.Server
	url string
}

func startFake(n int) (*fakeDynamoDB, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeDynamoDB{n: n, url: "http://" + ln.Addr().String()}
	f.srv = &http.Server{Handler: f}
	go f.srv.Serve(ln)
	return f, nil
}

func (f *fakeDynamoDB) close() { f.srv.Close() }

func fakeItem(b *bytes.Buffer, i int, changed bool) {
	status := "active"
	if changed {
		status = "corrupted"
	}
	fmt.Fprintf(b, `{"user_id":{"S":"user_%07d"},"email":{"S":"u%d@example.com"},"status":{"S":"%s"},"score":{"N":"%d"},`+
		`"roles":{"SS":["reader","writer"]},"profile":{"M":{"display_name":{"S":"User %d"},"langs":{"L":[{"S":"ja"}]}}},"padding":{"S":"%0150d"}}`,
		i, i, status, i*7, i, i)
}

func (f *fakeDynamoDB) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct {
		TableName         string
		Segment           int
		TotalSegments     int
		ExclusiveStartKey map[string]map[string]string
	}
	_ = json.Unmarshal(body, &in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch t := r.Header.Get("X-Amz-Target"); {
	case strings.HasSuffix(t, ".DescribeTable"):
		fmt.Fprintf(w, `{"Table":{"TableName":%q,"TableStatus":"ACTIVE","ItemCount":%d,"KeySchema":[{"AttributeName":"user_id","KeyType":"HASH"}],`+
			`"AttributeDefinitions":[{"AttributeName":"user_id","AttributeType":"S"}]}}`, in.TableName, f.n)
	case strings.HasSuffix(t, ".Scan"):
		total := max(in.TotalSegments, 1)
		i := in.Segment
		if k := in.ExclusiveStartKey["user_id"]["S"]; k != "" {
			last, _ := strconv.Atoi(strings.TrimPrefix(k, "user_"))
			i = last + total
		}
		changed := !strings.HasSuffix(in.TableName, "-restored")
		var b bytes.Buffer
		b.WriteString(`{"Items":[`)
		count := 0
		for ; i < f.n && b.Len() < 1<<20-1024; i += total {
			if count > 0 {
				b.WriteByte(',')
			}
			fakeItem(&b, i, changed && i%100 == 0)
			count++
		}
		fmt.Fprintf(&b, `],"Count":%d,"ScannedCount":%d`, count, count)
		if i < f.n {
			fmt.Fprintf(&b, `,"LastEvaluatedKey":{"user_id":{"S":"user_%07d"}}`, i-total)
		}
		b.WriteString("}")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		_, _ = w.Write(b.Bytes())
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"the bench's fake DynamoDB serves DescribeTable and Scan only, not %s"}`, t)
	}
}
