package exporttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3API is the part of S3 Upload uses.
type S3API interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	CreateMultipartUpload(context.Context, *s3.CreateMultipartUploadInput, ...func(*s3.Options)) (*s3.CreateMultipartUploadOutput, error)
	UploadPart(context.Context, *s3.UploadPartInput, ...func(*s3.Options)) (*s3.UploadPartOutput, error)
	CompleteMultipartUpload(context.Context, *s3.CompleteMultipartUploadInput, ...func(*s3.Options)) (*s3.CompleteMultipartUploadOutput, error)
}

// Upload copies an export written under root into bucket as AWS stores it:
// data files (.json.gz) as a multipart upload of one part, so their ETag is
// the "<hex>-1" the files manifest lists; everything else with PutObject.
func Upload(ctx context.Context, api S3API, bucket, root string) error {
	return filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(key, ".json.gz") {
			_, err = api.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body)})
			if err != nil {
				return fmt.Errorf("uploading %s: %w", key, err)
			}
			return nil
		}
		up, err := api.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return fmt.Errorf("uploading %s: %w", key, err)
		}
		part, err := api.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(body)})
		if err != nil {
			return fmt.Errorf("uploading %s: %w", key, err)
		}
		_, err = api.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		if err != nil {
			return fmt.Errorf("uploading %s: %w", key, err)
		}
		return nil
	})
}

// UploadKeys uploads some of the objects written under root (each with
// PutObject): a manifest rewritten after the data files, for example.
func UploadKeys(ctx context.Context, api S3API, bucket, root string, keys ...string) error {
	for _, key := range keys {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(key)))
		if err != nil {
			return err
		}
		if _, err := api.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			return fmt.Errorf("uploading %s: %w", key, err)
		}
	}
	return nil
}
