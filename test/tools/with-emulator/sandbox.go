package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dynops/dynops/test/helpers/emulator"
)

// sandboxCommands are the subcommands that keep one emulator running
// between commands. Each returns the process exit code.
var sandboxCommands = map[string]func(args []string) int{
	"up":     func(args []string) int { return sandboxMain(args, sandboxUp) },
	"env":    func(args []string) int { return sandboxMain(args, sandboxEnv) },
	"status": func(args []string) int { return sandboxMain(args, sandboxStatus) },
	"down":   func(args []string) int { return sandboxMain(args, sandboxDown) },
}

// sandboxState is what up records and the other subcommands read.
type sandboxState struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	LogPath string    `json:"log"`
	Started time.Time `json:"started"`
}

// sandboxRegion is the region the exports set: the demo's and the docs'.
const sandboxRegion = "eu-west-1"

// envNames are the variables up exports and down unsets.
var envNames = []string{"AWS_ENDPOINT_URL", "DYNOPS_EMULATOR_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION"}

// sandboxDir holds the state file and the server's log:
// $DYNOPS_SANDBOX_DIR, else the user's cache dir (~/.cache/dynops/sandbox).
func sandboxDir() (string, error) {
	if d := os.Getenv("DYNOPS_SANDBOX_DIR"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache dir for the sandbox state (set DYNOPS_SANDBOX_DIR): %w", err)
	}
	return filepath.Join(c, "dynops", "sandbox"), nil
}

func sandboxMain(args []string, f func(ctx context.Context, dir string, stdout, stderr io.Writer) error) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			fmt.Print(usage)
			return 0
		}
		fmt.Fprintf(os.Stderr, "with-emulator: the sandbox subcommands take no arguments, got %q\n%s", args, usage)
		return 2
	}
	dir, err := sandboxDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "with-emulator:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f(ctx, dir, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "with-emulator:", err)
		return 1
	}
	return 0
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// readState returns the recorded sandbox if its server still runs; a state
// file whose PID is gone (or now another program) is stale and removed.
func readState(dir string, stderr io.Writer) (*sandboxState, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the sandbox state %s: %w", statePath(dir), err)
	}
	var st sandboxState
	if err := json.Unmarshal(b, &st); err != nil || st.PID <= 0 || st.URL == "" {
		_ = os.Remove(statePath(dir))
		fmt.Fprintf(stderr, "with-emulator: %s was not a sandbox state (removed)\n", statePath(dir))
		return nil, nil
	}
	if !emulator.IsServer(st.PID) {
		_ = os.Remove(statePath(dir))
		fmt.Fprintf(stderr, "with-emulator: the sandbox recorded in %s (pid %d, %s) is no longer running (state removed)\n", statePath(dir), st.PID, st.URL)
		return nil, nil
	}
	return &st, nil
}

func printExports(w io.Writer, st *sandboxState) {
	fmt.Fprintf(w, "export AWS_ENDPOINT_URL=%s\nexport DYNOPS_EMULATOR_URL=%s\nexport AWS_ACCESS_KEY_ID=testing\nexport AWS_SECRET_ACCESS_KEY=testing\nexport AWS_REGION=%s\nexport AWS_DEFAULT_REGION=%s\n", st.URL, st.URL, sandboxRegion, sandboxRegion)
}

// sandboxUp starts a detached emulator, or reuses the running one, and
// prints the exports on stdout (for eval) and what it did on stderr.
func sandboxUp(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	st, err := readState(dir, stderr)
	if err != nil {
		return err
	}
	if st != nil {
		fmt.Fprintf(stderr, "with-emulator: the sandbox is already up: pid %d at %s since %s (log %s)\n", st.PID, st.URL, st.Started.Format(time.RFC3339), st.LogPath)
		printExports(stdout, st)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the sandbox dir %s: %w", dir, err)
	}
	emu, err := emulator.Start(ctx, emulator.Options{LogDir: dir, Detached: true})
	if err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	st = &sandboxState{PID: emu.PID(), URL: emu.URL, LogPath: emu.LogPath, Started: time.Now().UTC().Truncate(time.Second)}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(statePath(dir), append(b, '\n'), 0o644); err != nil {
		_ = emulator.StopPID(st.PID)
		return fmt.Errorf("recording the sandbox in %s (the server was stopped): %w", statePath(dir), err)
	}
	fmt.Fprintf(stderr, "with-emulator: sandbox up: moto_server pid %d at %s (log %s); stop it with: eval \"$(bin/with-emulator down)\"\n", st.PID, st.URL, st.LogPath)
	printExports(stdout, st)
	return nil
}

// sandboxEnv prints the exports of the running sandbox.
func sandboxEnv(_ context.Context, dir string, stdout, stderr io.Writer) error {
	st, err := readState(dir, stderr)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("no sandbox is running (looked in %s): start one with: eval \"$(bin/with-emulator up)\"", statePath(dir))
	}
	printExports(stdout, st)
	return nil
}

// sandboxStatus says whether the sandbox runs; exit 0 either way.
func sandboxStatus(_ context.Context, dir string, stdout, stderr io.Writer) error {
	st, err := readState(dir, stderr)
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintf(stdout, "sandbox: not running (state %s)\n", statePath(dir))
		return nil
	}
	fmt.Fprintf(stdout, "sandbox: running, moto_server pid %d at %s since %s, log %s\n", st.PID, st.URL, st.Started.Format(time.RFC3339), st.LogPath)
	return nil
}

// sandboxDown stops the recorded server by PID (only if it is a
// moto_server), removes the state and log, and prints the unsets.
func sandboxDown(_ context.Context, dir string, stdout, stderr io.Writer) error {
	st, err := readState(dir, stderr)
	if err != nil {
		return err
	}
	if st != nil {
		if err := emulator.StopPID(st.PID); err != nil {
			return fmt.Errorf("stopping the sandbox (pid %d): %w", st.PID, err)
		}
		_ = os.Remove(statePath(dir))
		_ = os.Remove(st.LogPath)
		fmt.Fprintf(stderr, "with-emulator: sandbox down: moto_server pid %d stopped; its tables, queues and buckets are gone\n", st.PID)
	} else {
		fmt.Fprintf(stderr, "with-emulator: no sandbox was running (looked in %s)\n", statePath(dir))
	}
	fmt.Fprintf(stdout, "unset")
	for _, n := range envNames {
		fmt.Fprintf(stdout, " %s", n)
	}
	fmt.Fprintln(stdout)
	return nil
}
