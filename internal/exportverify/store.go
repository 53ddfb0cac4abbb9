package exportverify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Object is one stored object.
type Object struct {
	Key  string
	Size int64
	ETag string // without quotes; "" when the store cannot say
	// LastModified is when S3 last wrote the object (zero when the store
	// cannot say: a local copy). S3 sets it; a writer cannot.
	LastModified time.Time
}

// ErrNotFound is returned by Stat for a missing object.
var ErrNotFound = errors.New("not found")

// Store is where an export lives: an S3 bucket, or a local copy of one
// (e.g. after `aws s3 sync`). Keys are '/'-separated.
type Store interface {
	// List returns the objects whose keys start with prefix, sorted by key.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Stat returns one object, or ErrNotFound.
	Stat(ctx context.Context, key string) (Object, error)
	// Open streams one object's bytes.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Describe names a key for messages (s3://bucket/key or a path).
	Describe(key string) string
}

// S3API is the part of the S3 API the S3 store uses.
type S3API interface {
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	HeadObject(context.Context, *s3.HeadObjectInput, ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// S3Store reads an export from a bucket.
type S3Store struct {
	Client S3API
	Bucket string
}

// List pages through ListObjectsV2.
func (s S3Store) List(ctx context.Context, prefix string) ([]Object, error) {
	var objs []Object
	p := s3.NewListObjectsV2Paginator(s.Client, &s3.ListObjectsV2Input{Bucket: &s.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", s.Bucket, prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: strings.Trim(aws.ToString(o.ETag), `"`),
				LastModified: aws.ToTime(o.LastModified)})
		}
	}
	return objs, nil
}

// Stat heads one object.
func (s S3Store) Stat(ctx context.Context, key string) (Object, error) {
	out, err := s.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		var nf *types.NotFound
		var nsk *types.NoSuchKey
		if errors.As(err, &nf) || errors.As(err, &nsk) {
			return Object{}, fmt.Errorf("%s: %w", s.Describe(key), ErrNotFound)
		}
		return Object{}, fmt.Errorf("reading %s: %w", s.Describe(key), err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: strings.Trim(aws.ToString(out.ETag), `"`),
		LastModified: aws.ToTime(out.LastModified)}, nil
}

// Open gets one object. The body resumes where it stopped when the
// connection drops mid-object (a ranged GetObject pinned to the first
// response's ETag, up to 5 times): the SDK retries calls, not the reading of
// a streamed body.
func (s S3Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.Describe(key), err)
	}
	return &resumingBody{ctx: ctx, s: s, key: key, etag: out.ETag, body: out.Body}, nil
}

// resumingBody re-requests the rest of an object after a read error.
type resumingBody struct {
	ctx     context.Context
	s       S3Store
	key     string
	etag    *string
	body    io.ReadCloser
	off     int64
	resumed int
}

func (r *resumingBody) Read(p []byte) (int, error) {
	for {
		n, err := r.body.Read(p)
		r.off += int64(n)
		if err == nil || err == io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil // the error comes back on the next read, which resumes
		}
		if r.resumed >= 5 || r.ctx.Err() != nil {
			return n, fmt.Errorf("reading %s at byte %d: %w", r.s.Describe(r.key), r.off, err)
		}
		r.resumed++
		_ = r.body.Close()
		rng := fmt.Sprintf("bytes=%d-", r.off)
		out, gerr := r.s.Client.GetObject(r.ctx, &s3.GetObjectInput{Bucket: &r.s.Bucket, Key: &r.key, Range: &rng, IfMatch: r.etag})
		if gerr != nil {
			return 0, fmt.Errorf("reading %s at byte %d: %w (resuming: %v)", r.s.Describe(r.key), r.off, err, gerr)
		}
		r.body = out.Body
	}
}

func (r *resumingBody) Close() error { return r.body.Close() }

// Describe returns s3://bucket/key.
func (s S3Store) Describe(key string) string { return "s3://" + s.Bucket + "/" + key }

// DirStore reads an export from a local directory laid out like the bucket.
type DirStore struct{ Root string }

// List walks the directory.
func (d DirStore) List(_ context.Context, prefix string) ([]Object, error) {
	var objs []Object
	err := filepath.WalkDir(d.Root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.Root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		objs = append(objs, Object{Key: key, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", d.Root, err)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	return objs, nil
}

// Stat reads the file's size. A local copy has no ETag: the MD5 check of
// the manifest covers the content.
func (d DirStore) Stat(_ context.Context, key string) (Object, error) {
	info, err := os.Stat(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return Object{}, fmt.Errorf("%s: %w", d.Describe(key), ErrNotFound)
	}
	if err != nil {
		return Object{}, fmt.Errorf("reading %s: %w", d.Describe(key), err)
	}
	return Object{Key: key, Size: info.Size()}, nil
}

// Open opens the file.
func (d DirStore) Open(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := os.Open(d.path(key))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", d.Describe(key), err)
	}
	return f, nil
}

// Describe returns the file path.
func (d DirStore) Describe(key string) string { return d.path(key) }

func (d DirStore) path(key string) string { return filepath.Join(d.Root, filepath.FromSlash(key)) }
