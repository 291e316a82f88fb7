package readiness

// nameList accumulates "<prefix>[a b c]" message parts joined by ", ", the exact format
// the kubelet produces with fmt.Sprintf("%s", []string) and strings.Join. It allocates
// only when a name is added.
type nameList struct {
	buf   []byte
	open  bool // a "[...]" part is open
	count int
}

// add appends name to the part that starts with prefix, opening it if needed.
func (l *nameList) add(prefix, name string) {
	if !l.open {
		if len(l.buf) > 0 {
			l.buf = append(l.buf, ", "...)
		}
		l.buf = append(l.buf, prefix...)
		l.buf = append(l.buf, '[')
		l.open = true
	} else {
		l.buf = append(l.buf, ' ')
	}
	l.buf = append(l.buf, name...)
	l.count++
}

// close ends the current part, if one is open.
func (l *nameList) close() {
	if l.open {
		l.buf = append(l.buf, ']')
		l.open = false
	}
}

// sentence appends a free-form message part.
func (l *nameList) sentence(parts ...string) {
	if len(l.buf) > 0 {
		l.buf = append(l.buf, ", "...)
	}
	for _, p := range parts {
		l.buf = append(l.buf, p...)
	}
	l.count++
}

func (l *nameList) String() string { l.close(); return string(l.buf) }
