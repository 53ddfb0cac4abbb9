// Package shardrun is the S3 prefix a sharded run exchanges its work
// through: s3://BUCKET/PREFIX/<run-id>/ holds the run's plan (plan.json,
// written once: a conditional create), the map stage's outputs and done
// markers, and the reduce stage's results. Every object is written whole in
// one PutObject, so a reader sees a shard's output entirely or not at all,
// and a retried or duplicated shard overwrites an object with the same bytes.
package shardrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3API is the part of the S3 client a Run uses.
type S3API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Run is one run's prefix in S3.
type Run struct {
	S3     S3API
	Bucket string
	// Prefix is the run's folder: PREFIX/<run-id>/ (ends with "/").
	Prefix string
	// ID is the run ID (the prefix's last folder).
	ID string
}

// ErrNotFound is wrapped when an object of the run does not exist.
var ErrNotFound = errors.New("not found")

// validID is a run ID: letters, digits, '.', '_' and '-', up to 128
// characters (an S3 key segment that needs no escaping anywhere).
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckID refuses a run ID that is not one folder name.
func CheckID(id string) error {
	if !validID.MatchString(id) {
		return fmt.Errorf("run ID %q: use letters, digits, '.', '_' and '-' (up to 128), starting with a letter or digit", id)
	}
	return nil
}

// ParsePrefix reads s3://BUCKET[/PREFIX] (the --run-prefix form) and returns
// the bucket and the prefix (without a trailing "/").
func ParsePrefix(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q is not an S3 URI: write s3://BUCKET/PREFIX", uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q has no bucket: write s3://BUCKET/PREFIX", uri)
	}
	return bucket, strings.Trim(prefix, "/"), nil
}

// New is the run id under s3://BUCKET/PREFIX (runPrefix).
func New(client S3API, runPrefix, id string) (*Run, error) {
	bucket, prefix, err := ParsePrefix(runPrefix)
	if err != nil {
		return nil, err
	}
	if err := CheckID(id); err != nil {
		return nil, err
	}
	if prefix != "" {
		prefix += "/"
	}
	return &Run{S3: client, Bucket: bucket, Prefix: prefix + id + "/", ID: id}, nil
}

// Open is the run at s3://BUCKET/PREFIX/RUN-ID (the --run form): the last
// folder is the run ID.
func Open(client S3API, uri string) (*Run, error) {
	bucket, prefix, err := ParsePrefix(uri)
	if err != nil {
		return nil, err
	}
	i := strings.LastIndex(prefix, "/")
	id := prefix[i+1:]
	if id == "" {
		return nil, fmt.Errorf("%q names no run: write s3://BUCKET/PREFIX/RUN-ID (as table diff prints it)", uri)
	}
	return New(client, "s3://"+bucket+"/"+prefix[:max(i, 0)], id)
}

// URI is the run's s3://BUCKET/PREFIX/RUN-ID.
func (r *Run) URI() string { return "s3://" + r.Bucket + "/" + strings.TrimSuffix(r.Prefix, "/") }

// Where is the s3:// address of name (a key relative to the run).
func (r *Run) Where(name string) string { return "s3://" + r.Bucket + "/" + r.Prefix + name }

// Put writes name whole, replacing what is there.
func (r *Run) Put(ctx context.Context, name string, data []byte) error {
	key := r.Prefix + name
	_, err := r.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: &r.Bucket, Key: &key, Body: bytes.NewReader(data)})
	if err != nil {
		return fmt.Errorf("writing %s: %w", r.Where(name), err)
	}
	return nil
}

// PutNew writes name only if it does not exist (If-None-Match: *); created
// is false when it did.
func (r *Run) PutNew(ctx context.Context, name string, data []byte) (created bool, err error) {
	key := r.Prefix + name
	_, err = r.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: &r.Bucket, Key: &key, Body: bytes.NewReader(data), IfNoneMatch: aws.String("*")})
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("creating %s: %w", r.Where(name), err)
	}
	return true, nil
}

// Get reads name; a missing object is an error wrapping ErrNotFound.
func (r *Run) Get(ctx context.Context, name string) ([]byte, error) {
	key := r.Prefix + name
	out, err := r.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: &r.Bucket, Key: &key})
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return nil, fmt.Errorf("%s: %w", r.Where(name), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.Where(name), err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.Where(name), err)
	}
	return data, nil
}
