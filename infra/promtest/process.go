package promtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// errPortTaken is start's error when prometheus could not listen: its port was taken.
var errPortTaken = errors.New("port taken")

// logTailBytes is how much of the log's end a failure shows.
const logTailBytes = 4 << 10

// start starts the process and waits until it is ready and has scraped every target up; on
// failure the process is gone.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return fmt.Errorf("%s is already running", s)
	}
	logged := int64(0) // what the log held before this start (a restart appends to it)
	if fi, err := os.Stat(s.path("prometheus.log")); err == nil {
		logged = fi.Size()
	}
	log, err := os.OpenFile(s.path("prometheus.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("prometheus log: %w", err)
	}
	defer log.Close() // the process has its own descriptor
	cmd := exec.Command(s.bin, "--config.file="+s.path("prometheus.yml"),
		"--storage.tsdb.path="+s.path("data"), "--storage.tsdb.retention.time=1h",
		"--web.listen-address="+s.Addr(), "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log // files: no copying goroutines
	since := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start prometheus: %w", err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := s.waitReady(p, since, logged); err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		return err
	}
	s.proc = p
	return nil
}

// waitReady waits until p answers ready and has scraped every target up since it started.
func (s *Server) waitReady(p *process, since time.Time, logged int64) error {
	deadline := since.Add(startTimeout)
	exited := func() error {
		if bytes.Contains(s.logSince(logged), []byte("address already in use")) {
			return fmt.Errorf("%s: %w", s, errPortTaken)
		}
		return fmt.Errorf("%s exited at its start: %v", s, p.err)
	}
	for {
		select {
		case <-p.done: // before asking: what answers may be another process on the port
			return exited()
		default:
		}
		err := s.ready(since)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return exited()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v", s, startTimeout, err)
		}
	}
}

// ready answers nil once /-/ready answers 200 and every target's up is 1 in a scrape made
// since the process started (not in the data a previous one left).
func (s *Server) ready(since time.Time) error {
	resp, err := client.Get(s.URL() + "/-/ready")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/-/ready: %s", resp.Status)
	}
	if len(s.targets) == 0 {
		return nil
	}
	// timestamp() gives a sample's time only of a bare selector (of an expression, such as
	// up == 1, it gives the query's time): the up of this process's scrapes, not of the data
	// a previous one left.
	at := strconv.FormatFloat(float64(since.UnixMilli())/1000, 'f', 3, 64)
	vals, err := s.Query(`count((timestamp(up{job="exporter"}) >= ` + at + `) and (up{job="exporter"} == 1))`)
	if err != nil {
		return err
	}
	if len(vals) != 1 || vals[0] != float64(len(s.targets)) {
		return fmt.Errorf("targets scraped up since the start: %v of %d", vals, len(s.targets))
	}
	return nil
}

// logSince returns what the log gained after its first offset bytes.
func (s *Server) logSince(offset int64) []byte {
	b, _ := os.ReadFile(s.path("prometheus.log"))
	if int64(len(b)) < offset {
		return nil
	}
	return b[offset:]
}

// logTail returns the end of the log (every start's), from a line's start.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.path("prometheus.log"))
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		return "…\n" + string(b)
	}
	return string(b)
}
