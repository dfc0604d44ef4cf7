package server

import (
	"net"
	"syscall"
)

// inputPending reports whether c's client has sent bytes the server has
// not read yet (the next request is on its way): such a connection is not
// quiet, and closing it would lose that request. It peeks without
// blocking and without taking the read lock net/http holds while it waits.
func inputPending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	pending := false
	raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		pending = err == nil && n > 0
	})
	return pending
}
