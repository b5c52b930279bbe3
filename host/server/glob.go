package server

// globMatch reports whether s matches the Redis glob pattern p (*, ?,
// [abc], [^a-z], \x), as Redis's stringmatchlen; nocase folds ASCII case.
func globMatch(p, s string, nocase bool) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:], nocase) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					// Unterminated class: Redis treats the end as ']'.
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if eqFold(p[0], s[0], nocase) {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					c := s[0]
					if nocase {
						lo, hi, c = lower(lo), lower(hi), lower(c)
					}
					if c >= lo && c <= hi {
						match = true
					}
					p = p[2:]
				} else if eqFold(p[0], s[0], nocase) {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(p) == 0 {
				return len(s) == 0
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || !eqFold(p[0], s[0], nocase) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
	}
	return len(s) == 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func eqFold(a, b byte, nocase bool) bool {
	if nocase {
		return lower(a) == lower(b)
	}
	return a == b
}
