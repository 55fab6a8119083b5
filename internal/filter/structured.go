package filter

// Structured sensitive data: US social security numbers, payment cards and IBANs. Each is
// validated (SSN area/group/serial rules, card IIN ranges + length + Luhn, IBAN country length
// + ISO 7064 mod-97) so that order numbers, timestamps, phone numbers and IDs stay.

// numBefore reports whether the digit run at i may start a number: not glued to a longer
// token by '-', '.', '_', '+', '/', or '#'.
func numBefore(b []byte, i int) bool {
	if i == 0 {
		return true
	}
	switch b[i-1] {
	case '-', '.', '_', '+', '/', '#':
		return false
	}
	return true
}

// numAfter reports whether a number may end at j: no alphanumeric follows, and no separator
// that continues it with another digit.
func numAfter(b []byte, j int) bool {
	if j >= len(b) {
		return true
	}
	if isAlnum(b[j]) {
		return false
	}
	switch b[j] {
	case '-', '.', '_', '/':
		return !(j+1 < len(b) && isDigit(b[j+1]))
	}
	return true
}

// detectNumber runs the SSN and payment-card checks at a word start that is a digit.
func detectNumber(b []byte, i int) (span, bool) {
	if !numBefore(b, i) {
		return span{}, false
	}
	if s, ok := detectSSN(b, i); ok {
		return s, true
	}
	return detectCard(b, i)
}

// detectSSN matches AAA-GG-SSSS with area 001–899 except 666, group 01–99, serial 0001–9999.
func detectSSN(b []byte, i int) (span, bool) {
	if len(b)-i < 11 {
		return span{}, false
	}
	w := b[i : i+11]
	for k, c := range w {
		if k == 3 || k == 6 {
			if c != '-' {
				return span{}, false
			}
		} else if !isDigit(c) {
			return span{}, false
		}
	}
	if !numAfter(b, i+11) {
		return span{}, false
	}
	area := int(w[0]-'0')*100 + int(w[1]-'0')*10 + int(w[2]-'0')
	group := int(w[4]-'0')*10 + int(w[5]-'0')
	serial := int(w[7]-'0')*1000 + int(w[8]-'0')*100 + int(w[9]-'0')*10 + int(w[10]-'0')
	if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 {
		return span{}, false
	}
	return span{i, i + 11, cSSN}, true
}

// detectCard matches 13–19 digits, contiguous or in groups separated by one space or one
// hyphen (4-4-4-4[-1..3], 4-6-5, 4-6-4), with a realistic IIN for its length and a valid Luhn
// check digit.
func detectCard(b []byte, i int) (span, bool) {
	var d [19]byte
	nd := 0
	j := i
	for j < len(b) && isDigit(b[j]) {
		if nd == 19 {
			return span{}, false
		}
		d[nd] = b[j]
		nd++
		j++
	}
	if nd >= 13 {
		if !numAfter(b, j) || !cardValid(d[:nd]) || stateKeyBefore(b, i) {
			return span{}, false
		}
		return span{i, j, cPaymentCard}, true
	}
	if nd != 4 || j+1 >= len(b) || (b[j] != ' ' && b[j] != '-') || !isDigit(b[j+1]) {
		return span{}, false
	}
	sep := b[j]
	var groups [6]int
	ng := 0
	groups[ng] = 4
	ng++
	for j < len(b) && b[j] == sep && j+1 < len(b) && isDigit(b[j+1]) {
		if ng == len(groups) {
			return span{}, false
		}
		j++
		g := 0
		for j < len(b) && isDigit(b[j]) {
			if nd == 19 {
				return span{}, false
			}
			d[nd] = b[j]
			nd++
			g++
			j++
		}
		groups[ng] = g
		ng++
	}
	if nd < 13 || !numAfter(b, j) || !cardGroups(groups[:ng]) || !cardValid(d[:nd]) {
		return span{}, false
	}
	return span{i, j, cPaymentCard}, true
}

// stateKeyBefore reports a value of a pagination or protocol-state key (next_page_token=…,
// "continuation_token": "…"): a long digit string there is a cursor that happens to pass the
// Luhn check (one in ten does), not a card number.
func stateKeyBefore(b []byte, i int) bool {
	j := i - 1
	if j >= 0 && (b[j] == '"' || b[j] == '\'') {
		j--
	}
	for j >= 0 && b[j] == ' ' {
		j--
	}
	if j < 0 || (b[j] != '=' && b[j] != ':') {
		return false
	}
	j--
	if j >= 0 && (b[j] == '"' || b[j] == '\'') {
		j--
	}
	ke := j + 1
	for j >= 0 && ke-j <= 48 && setKey[b[j]] {
		j--
	}
	var kbuf [48]byte
	return hasAnySuffix(string(appendLowerASCII(kbuf[:0], b[j+1:ke])), notSecretSuffixes)
}

func cardGroups(g []int) bool {
	if len(g) == 3 && g[0] == 4 && g[1] == 6 && (g[2] == 5 || g[2] == 4) {
		return true
	}
	for k, n := range g {
		last := k == len(g)-1
		if (!last && n != 4) || (last && (n < 1 || n > 4)) {
			return false
		}
	}
	return len(g) >= 4
}

func prefixNum(d []byte, n int) int {
	v := 0
	for k := 0; k < n; k++ {
		v = v*10 + int(d[k]-'0')
	}
	return v
}

// cardValid checks the issuer range against the length, then Luhn.
func cardValid(d []byte) bool {
	n := len(d)
	p1, p2, p3, p4, p6 := prefixNum(d, 1), prefixNum(d, 2), prefixNum(d, 3), prefixNum(d, 4), prefixNum(d, 6)
	ok := false
	switch {
	case p1 == 4: // Visa (the legacy 13-digit form is left out: it mostly matches counters)
		ok = n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		ok = n == 16
	case p2 == 34 || p2 == 37: // American Express
		ok = n == 15
	case p4 == 6011, p3 >= 644 && p3 <= 649, p2 == 65, p6 >= 622126 && p6 <= 622925: // Discover
		ok = n >= 16 && n <= 19
	case p2 == 62: // UnionPay
		ok = n >= 16 && n <= 19
	case p4 >= 3528 && p4 <= 3589: // JCB
		ok = n >= 16 && n <= 19
	case p3 >= 300 && p3 <= 305, p3 == 309, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		ok = n >= 14 && n <= 19
	}
	return ok && luhn(d)
}

func luhn(d []byte) bool {
	sum := 0
	double := false
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// ibanLengths is the IBAN length per country (SWIFT IBAN registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
	"BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
	"DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
	"GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
	"IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
	"MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// detectIBAN matches an IBAN, contiguous or printed in groups of four separated by single
// spaces, of exactly its country's length and with a valid mod-97 checksum.
func detectIBAN(b []byte, i int) (span, bool) {
	if len(b)-i < 15 || !isUpper(b[i+1]) || !isDigit(b[i+2]) || !isDigit(b[i+3]) {
		return span{}, false
	}
	want := ibanLengths[string(b[i:i+2])]
	if want == 0 {
		return span{}, false
	}
	var buf [34]byte
	j := setUpperDigit.run(b, i)
	if n := j - i; n == want {
		copy(buf[:], b[i:j])
	} else if n == 4 {
		copy(buf[:], b[i:j])
		for n < want && j+1 < len(b) && b[j] == ' ' && setUpperDigit[b[j+1]] {
			if n%4 != 0 {
				return span{}, false // only the last group may be short
			}
			e := setUpperDigit.run(b, j+1)
			g := e - (j + 1)
			if g > 4 || n+g > want {
				return span{}, false
			}
			copy(buf[n:], b[j+1:e])
			n += g
			j = e
		}
		if n != want {
			return span{}, false
		}
	} else {
		return span{}, false
	}
	if j < len(b) && isAlnum(b[j]) {
		return span{}, false
	}
	if !ibanValid(buf[:want]) {
		return span{}, false
	}
	return span{i, j, cIBAN}, true
}

// ibanValid computes ISO 7064 mod 97-10 over the rearranged IBAN.
func ibanValid(s []byte) bool {
	rem := 0
	step := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	for _, c := range s[4:] {
		step(c)
	}
	for _, c := range s[:4] {
		step(c)
	}
	return rem == 1
}
