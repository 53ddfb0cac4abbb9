// Command with-emulator runs a command with a fresh local AWS emulator:
// it starts moto_server on a free loopback port, runs the command with
// AWS_ENDPOINT_URL (and DYNOPS_EMULATOR_URL) pointing at it, and stops the
// server by PID when the command ends, whatever its outcome.
//
//	go run ./test/tools/with-emulator -- bash scripts/demo.sh
//
// Its sandbox subcommands keep one emulator running between commands, a
// place to practise (docs/sandbox.md): up, env, status, down.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/dynops/dynops/test/helpers/emulator"
)

func main() {
	os.Exit(run())
}

func run() (code int) {
	if len(os.Args) > 1 {
		if sub, ok := sandboxCommands[os.Args[1]]; ok {
			return sub(os.Args[2:])
		}
	}
	args, code, done := parseArgs(os.Args[1:])
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	emu, err := emulator.Start(ctx, emulator.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "with-emulator:", err)
		return 1
	}
	defer func() { _ = emu.Close(code != 0) }() // a failed command keeps the log
	fmt.Fprintf(os.Stderr, "with-emulator: moto_server pid %d at %s (log %s)\n", emu.PID(), emu.URL, emu.LogPath)

	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL="+emu.URL,
		"DYNOPS_EMULATOR_URL="+emu.URL,
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing",
	)
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "with-emulator:", err)
		return 1
	}
}

const usage = `usage: with-emulator [-h] -- COMMAND [ARGS...]
       with-emulator up|env|status|down

Starts moto_server (the local AWS emulator) on a free loopback port, runs
COMMAND with AWS_ENDPOINT_URL and DYNOPS_EMULATOR_URL pointing at it and fake
credentials, and stops the server by its PID when COMMAND ends. The exit code
is COMMAND's. A failed COMMAND keeps the emulator's log (its path is printed).

  with-emulator -- bash scripts/demo.sh
  with-emulator -- bash        # a shell to practise dynops on the emulator

The sandbox: one emulator that stays up between commands (docs/sandbox.md).

  eval "$(with-emulator up)"   # start it (or reuse it), export its settings
  with-emulator env            # print the exports again (another shell)
  with-emulator status         # running or not, its URL, PID and log
  eval "$(with-emulator down)" # stop it by PID, unset the exports
`

// parseArgs reads the options before "--": -h/--help prints the usage
// (exit 0), anything else that looks like an option is refused (exit 2)
// before an emulator is started. done is true when run must return code.
func parseArgs(args []string) (rest []string, code int, done bool) {
	if len(args) > 0 && args[0] != "--" && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Print(usage)
			return nil, 0, true
		}
		fmt.Fprintf(os.Stderr, "with-emulator: unknown option %q: put the command after --\n%s", args[0], usage)
		return nil, 2, true
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return nil, 2, true
	}
	return args, 0, false
}
