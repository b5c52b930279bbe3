package kit

// Match reports whether s matches the glob pattern as Redis's stringmatchlen
// does (case-sensitive): * and ? wildcards, [abc], [^abc] and [a-z] classes
// (reversed ranges allowed, bytes compared as C's signed char), and \ to
// escape. Malformed patterns behave as in Redis: an unterminated class
// matches on what it has read. The pattern "*" matches everything, even the
// empty string, because Redis's KEYS and SCAN skip matching for it.
func Match(pattern, s []byte) bool {
	if len(pattern) == 1 && pattern[0] == '*' {
		return true
	}
	skip := false
	return match(pattern, s, &skip)
}

// at returns p[i], or 0 past the end where C reads the string's terminator.
func at(p []byte, i int) byte {
	if i < len(p) {
		return p[i]
	}
	return 0
}

func match(p, s []byte, skipLonger *bool) bool {
	pi, plen := 0, len(p)
	si, slen := 0, len(s)
	for plen > 0 && slen > 0 {
		switch p[pi] {
		case '*':
			for plen > 0 && at(p, pi+1) == '*' {
				pi++
				plen--
			}
			if plen == 1 {
				return true
			}
			for slen > 0 {
				if match(p[pi+1:pi+plen], s[si:si+slen], skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				si++
				slen--
			}
			// No match for the rest of the pattern anywhere in the rest of
			// the string: earlier stars need not try longer matches.
			*skipLonger = true
			return false
		case '?':
			si++
			slen--
		case '[':
			pi++
			plen--
			not := at(p, pi) == '^'
			if not {
				pi++
				plen--
			}
			matched := false
			for {
				if at(p, pi) == '\\' && plen >= 2 {
					pi++
					plen--
					if at(p, pi) == s[si] {
						matched = true
					}
				} else if at(p, pi) == ']' {
					break
				} else if plen == 0 {
					pi--
					plen++
					break
				} else if plen >= 3 && at(p, pi+1) == '-' {
					lo, hi, ch := int8(p[pi]), int8(p[pi+2]), int8(s[si])
					if lo > hi {
						lo, hi = hi, lo
					}
					pi += 2
					plen -= 2
					if ch >= lo && ch <= hi {
						matched = true
					}
				} else if at(p, pi) == s[si] {
					matched = true
				}
				pi++
				plen--
			}
			if not {
				matched = !matched
			}
			if !matched {
				return false
			}
			si++
			slen--
		case '\\':
			if plen >= 2 {
				pi++
				plen--
			}
			fallthrough
		default:
			if at(p, pi) != s[si] {
				return false
			}
			si++
			slen--
		}
		pi++
		plen--
		if slen == 0 {
			for at(p, pi) == '*' {
				pi++
				plen--
			}
			break
		}
	}
	return plen == 0 && slen == 0
}
