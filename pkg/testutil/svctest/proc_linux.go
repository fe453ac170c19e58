package svctest

import (
	"os"
	"strconv"
	"syscall"
)

// childAttr makes the kernel kill the service when the test process dies
// (a fuzz worker killed on a crash or timeout has no Cleanup to run), so
// no service outlives its test.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec. Go
// opens its own that way, but a test process may have inherited some: go
// test -fuzz hands each worker its pipes as fd 3 and 4, and a service
// holding them would keep the coordinator waiting for EOF forever after
// the worker ended.
func closeInheritedOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
