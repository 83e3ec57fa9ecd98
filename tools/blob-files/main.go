// Command blob-files copies files to and from the Pulumi state backend's bucket, opened exactly as the
// Pulumi CLI opens its DIY backend (pkg/backend/diy: gocloud.dev's URL mux, then the URL's path as a
// prefix), with the same driver version (gocloud.dev v0.46.0, the one tools/pulumi/go.mod pins) and
// so the same credentials from the environment: account key, SAS, connection string, or Entra ID
// (workload identity, managed identity). A shard's run records and the region's shard plan live
// beside the state, so wherever the state can be read and written, so can they.
//
// Usage:
//
//	blob-files put    <backend URL> <key> <local file>     upload one file (replaces the blob)
//	blob-files get    <backend URL> <prefix> <directory>   download every blob under prefix, names relative to it
//	blob-files newest <backend URL> <prefix>               print "<first name segment under prefix> <unix seconds>" of the newest blob
//
// Keys are relative to the URL's path (`azblob://container/some/path` keeps everything under
// `some/path/`, as the CLI does). Exit code 1 on a failure, with the key named; 2 on a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://, as the Pulumi CLI
	_ "gocloud.dev/blob/fileblob"  // file://, as the Pulumi CLI
	"gocloud.dev/gcerrors"
)

const usage = `usage: blob-files put <backend URL> <key> <file>
       blob-files get <backend URL> <prefix> <directory>
       blob-files newest <backend URL> <prefix>`

func main() {
	if len(os.Args) < 2 {
		fail(2, usage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	switch command, arguments := os.Args[1], os.Args[2:]; {
	case command == "put" && len(arguments) == 3:
		err = withBucket(ctx, arguments[0], func(bucket *blob.Bucket) error { return put(ctx, bucket, arguments[1], arguments[2]) })
	case command == "get" && len(arguments) == 3:
		err = withBucket(ctx, arguments[0], func(bucket *blob.Bucket) error { return get(ctx, bucket, arguments[1], arguments[2]) })
	case command == "newest" && len(arguments) == 2:
		err = withBucket(ctx, arguments[0], func(bucket *blob.Bucket) error { return newest(ctx, bucket, arguments[1]) })
	default:
		fail(2, usage)
	}
	if err != nil {
		fail(1, "blob-files: "+err.Error())
	}
}

func fail(code int, message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(code)
}

// withBucket opens the bucket as pkg/backend/diy's New does: the URL through gocloud's default mux,
// then, for a URL other than file://, its path as a prefix.
func withBucket(ctx context.Context, backendURL string, use func(*blob.Bucket) error) error {
	parsed, err := url.Parse(backendURL)
	if err != nil {
		return fmt.Errorf("backend URL does not parse: %w", err)
	}
	bucket, err := blob.DefaultURLMux().OpenBucket(ctx, backendURL)
	if err != nil {
		// The URL carries no secret (credentials come from the environment), so it may be named.
		return fmt.Errorf("opening bucket %s: %w", backendURL, err)
	}
	if parsed.Scheme != "file" {
		if subDirectory := strings.TrimLeft(parsed.Path, "/"); subDirectory != "" {
			bucket = blob.PrefixedBucket(bucket, strings.TrimSuffix(subDirectory, "/")+"/")
		}
	}
	defer bucket.Close()
	return use(bucket)
}

func put(ctx context.Context, bucket *blob.Bucket, key, file string) error {
	content, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading %s for %s: %w", file, key, err)
	}
	if err := bucket.WriteAll(ctx, key, content, nil); err != nil {
		return fmt.Errorf("writing %s: %w", key, err)
	}
	return nil
}

func get(ctx context.Context, bucket *blob.Bucket, prefix, directory string) error {
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	iterator := bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		object, err := iterator.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", prefix, err)
		}
		relative := strings.TrimPrefix(object.Key, prefix)
		target := filepath.Join(directory, filepath.FromSlash(relative))
		if relative == "" || !strings.HasPrefix(target, filepath.Clean(directory)+string(filepath.Separator)) {
			return fmt.Errorf("blob %s does not name a file under %s", object.Key, directory)
		}
		content, err := bucket.ReadAll(ctx, object.Key)
		if err != nil {
			return fmt.Errorf("reading %s: %w", object.Key, err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return err
		}
	}
}

func newest(ctx context.Context, bucket *blob.Bucket, prefix string) error {
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	iterator := bucket.List(&blob.ListOptions{Prefix: prefix})
	var newestKey string
	var newestTime time.Time
	for {
		object, err := iterator.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if gcerrors.Code(err) == gcerrors.NotFound {
				break
			}
			return fmt.Errorf("listing %s: %w", prefix, err)
		}
		if newestKey == "" || object.ModTime.After(newestTime) {
			newestKey, newestTime = object.Key, object.ModTime
		}
	}
	if newestKey == "" {
		return fmt.Errorf("no blob under %s", prefix)
	}
	segment, _, _ := strings.Cut(strings.TrimPrefix(newestKey, prefix), "/")
	fmt.Printf("%s %d\n", segment, newestTime.Unix())
	return nil
}
