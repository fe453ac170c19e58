//go:build !linux

package svctest

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

func closeInheritedOnExec() {}
