package exportverify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyS3 is S3 at the SDK interface: every body breaks after cut bytes
// (a dropped connection), ranged GETs serve the rest, If-Match is checked.
type flakyS3 struct {
	objects map[string][]byte
	cut     int
	gets    []string
}

type brokenBody struct {
	r   io.Reader
	err error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}
func (b *brokenBody) Close() error { return nil }

func (f *flakyS3) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	out := &s3.ListObjectsV2Output{}
	for k, v := range f.objects {
		if strings.HasPrefix(k, aws.ToString(in.Prefix)) {
			out.Contents = append(out.Contents, types.Object{Key: aws.String(k), Size: aws.Int64(int64(len(v))), ETag: aws.String(`"etag-` + k + `"`)})
		}
	}
	return out, nil
}

func (f *flakyS3) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	v, ok := f.objects[aws.ToString(in.Key)]
	if !ok {
		return nil, &types.NotFound{}
	}
	return &s3.HeadObjectOutput{ContentLength: aws.Int64(int64(len(v))), ETag: aws.String(`"etag-` + aws.ToString(in.Key) + `"`)}, nil
}

func (f *flakyS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	v, ok := f.objects[key]
	if !ok {
		return nil, &types.NoSuchKey{}
	}
	f.gets = append(f.gets, aws.ToString(in.Range))
	if in.IfMatch != nil && aws.ToString(in.IfMatch) != `"etag-`+key+`"` {
		return nil, errors.New("PreconditionFailed")
	}
	off := 0
	if r := aws.ToString(in.Range); r != "" {
		_, _ = fmt.Sscanf(r, "bytes=%d-", &off)
	}
	rest := v[off:]
	body := &brokenBody{r: bytes.NewReader(rest)}
	if len(rest) > f.cut {
		body = &brokenBody{r: bytes.NewReader(rest[:f.cut]), err: errors.New("read tcp: connection reset by peer")}
	}
	return &s3.GetObjectOutput{Body: body, ETag: aws.String(`"etag-` + key + `"`)}, nil
}

func TestS3StoreResumesADroppedBody(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	f := &flakyS3{objects: map[string][]byte{"p/a": data}, cut: 3000}
	s := S3Store{Client: f, Bucket: "b"}
	r, err := s.Open(context.Background(), "p/a")
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, data, got, "every byte once, in order")
	assert.Equal(t, []string{"", "bytes=3000-", "bytes=6000-", "bytes=9000-"}, f.gets)

	f = &flakyS3{objects: map[string][]byte{"p/a": data}, cut: 100}
	r, err = S3Store{Client: f, Bucket: "b"}.Open(context.Background(), "p/a")
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.Error(t, err, "gives up after 5 resumptions")
	assert.Contains(t, err.Error(), "s3://b/p/a at byte 600")
}

func TestS3StoreStatAndNotFound(t *testing.T) {
	f := &flakyS3{objects: map[string][]byte{"p/a": []byte("x")}, cut: 10}
	s := S3Store{Client: f, Bucket: "b"}
	o, err := s.Stat(context.Background(), "p/a")
	require.NoError(t, err)
	assert.Equal(t, "etag-p/a", o.ETag, "quotes stripped")
	_, err = s.Stat(context.Background(), "p/missing")
	assert.ErrorIs(t, err, ErrNotFound)
}
