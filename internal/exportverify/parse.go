package exportverify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// chunkBytes is how many bytes of lines a file's reader hands to the
// parsers at once: large enough that the hand-over costs nothing beside the
// decoding (about 250 items of 250 bytes), small enough that the chunks in
// flight stay about a megabyte (a first cut at 256 KB, with two chunks per
// parser queued, measured 5-15 MB more peak RSS at 10x the items).
const chunkBytes = 64 << 10

// errLinesFailed stops a file's reader once one of its lines failed in a
// parser (wait then returns that line's error).
var errLinesFailed = errors.New("a line failed to decode")

// parsePool decodes the lines of export data files on a fixed number of
// goroutines (one per core). A file's reader (fileLines) copies its lines
// into chunks and sends them to the pool; the channel holds one chunk per
// parser, so a reader faster than the parsers waits rather than buffering:
// memory is (2 x parsers + files being read) x chunkBytes at most, whatever
// the export's size.
type parsePool struct {
	ctx    context.Context
	fn     func(map[string]types.AttributeValue) error
	chunks chan *chunk
	bufs   sync.Pool
	wg     sync.WaitGroup
	once   sync.Once
}

// chunk is whole lines of one file, each ending in '\n'; first is the
// number of its first line in the file (1-based, blank lines not counted).
type chunk struct {
	buf   []byte
	first int64
	file  *fileLines
}

func newParsePool(ctx context.Context, parsers int, fn func(map[string]types.AttributeValue) error) *parsePool {
	p := &parsePool{ctx: ctx, fn: fn, chunks: make(chan *chunk, max(parsers, 1))}
	p.bufs.New = func() any { return &chunk{buf: make([]byte, 0, chunkBytes+16<<10)} }
	for range max(parsers, 1) {
		p.wg.Go(func() {
			for c := range p.chunks {
				p.parse(c)
			}
		})
	}
	return p
}

// close stops the parsers once every chunk sent is done; call it after the
// files' readers returned.
func (p *parsePool) close() {
	p.once.Do(func() { close(p.chunks) })
	p.wg.Wait()
}

// parse decodes a chunk's lines and hands each item to fn; a line that
// fails is recorded on its file and ends the chunk. Lines after a failed
// line of the same file are skipped, lines before it are not: the file's
// error is its first bad line whichever parser got there first, and fn has
// seen every line before it, as a sequential read would. A chunk sent after
// the run was cancelled is skipped.
func (p *parsePool) parse(c *chunk) {
	f := c.file
	defer func() {
		c.buf, c.file = c.buf[:0], nil
		p.bufs.Put(c)
		f.wg.Done()
	}()
	if p.ctx.Err() != nil {
		return
	}
	n, buf := c.first, c.buf
	for len(buf) > 0 {
		if at := f.errAt.Load(); at > 0 && n >= at {
			return
		}
		i := bytes.IndexByte(buf, '\n')
		if err := decodeItem(buf[:i], p.fn); err != nil {
			f.fail(n, err)
			return
		}
		buf, n = buf[i+1:], n+1
	}
}

// file starts the lines of one data file.
func (p *parsePool) file() *fileLines { return &fileLines{pool: p} }

// fileLines is one data file's lines on their way to the parsers: its
// reader calls add for each line, in order, then wait.
type fileLines struct {
	pool *parsePool
	cur  *chunk
	n    int64 // lines added
	wg   sync.WaitGroup

	errAt atomic.Int64 // the first failed line so far (0: none)
	mu    sync.Mutex
	err   error // errAt's error
}

// add copies line into the current chunk and sends the chunk when full.
func (f *fileLines) add(line []byte) error {
	if f.errAt.Load() > 0 { // the lines still to come are all after it
		return errLinesFailed
	}
	if f.cur == nil {
		f.cur = f.pool.bufs.Get().(*chunk)
		f.cur.first, f.cur.file = f.n+1, f
	}
	f.cur.buf = append(append(f.cur.buf, line...), '\n')
	f.n++
	if len(f.cur.buf) >= chunkBytes {
		return f.send()
	}
	return nil
}

func (f *fileLines) send() error {
	c := f.cur
	if c == nil {
		return nil
	}
	f.cur = nil
	f.wg.Add(1)
	select {
	case f.pool.chunks <- c:
		return nil
	case <-f.pool.ctx.Done():
		f.wg.Done()
		return f.pool.ctx.Err()
	}
}

// wait sends the last chunk and returns when all of the file's chunks are
// decoded: nil, or the error of its first failed line.
func (f *fileLines) wait() error {
	err := f.send()
	f.wg.Wait()
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return fmt.Errorf("line %d is not DynamoDB JSON: %w", f.errAt.Load(), f.err)
	}
	return nil
}

// fail records that line failed with err, unless an earlier line did.
func (f *fileLines) fail(line int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at := f.errAt.Load(); at == 0 || line < at {
		f.errAt.Store(line)
		f.err = err
	}
}
