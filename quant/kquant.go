package quant

// Shared pieces of the K-quant super-blocks (256 elements).
const kElems = 256

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j from the 12
// scale bytes of a Q4_K or Q5_K block (ggml's get_scale_min_k4): bytes 0-3
// hold scales 0-3 and bytes 4-7 mins 0-3 in their low six bits; sub-blocks
// 4-7 take their low four bits from bytes 8-11 and their top two bits from
// the spare high bits of bytes 0-7.
func scaleMinK4(j int, s *[12]byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// packScaleMinK4 is the inverse of scaleMinK4 for eight 6-bit scales and mins.
func packScaleMinK4(ls, lm *[8]uint8, s *[12]byte) {
	*s = [12]byte{}
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
			continue
		}
		s[j+4] = ls[j]&15 | (lm[j]&15)<<4
		s[j-4] |= (ls[j] >> 4) << 6
		s[j] |= (lm[j] >> 4) << 6
	}
}

// makeQKX2Quants is ggml's make_qkx2_quants: it fits x ≈ scale·L − min with
// L in [0, nmax] by weighted least squares, trying nstep+1 candidate inverse
// scales around nmax/(max−min) and keeping the best. It fills L and returns
// the scale and the (non-negative) min.
func makeQKX2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	lo, hi := x[0], x[0]
	var sumW, sumX float32
	for i, v := range x {
		lo, hi = min(lo, v), max(hi, v)
		sumW += weights[i]
		sumX += weights[i] * v
	}
	lo = min(lo, 0)
	if hi == lo {
		clear(L)
		return 0, -lo
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var bestErr float32
	for i, v := range x {
		L[i] = uint8(clampInt(nearestInt(iscale*(v-lo)), 0, nmax))
		diff := scale*float32(L[i]) + lo - v
		bestErr += weights[i] * diff * diff
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + rdelta*float32(is) + float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(iscale*(v-lo)), 0, nmax)
			laux[i] = uint8(l)
			w := weights[i]
			sumL += w * float32(l)
			sumL2 += w * float32(l) * float32(l)
			sumXL += w * float32(l) * v
		}
		D := sumW*sumL2 - sumL*sumL
		if D <= 0 {
			continue
		}
		thisScale := (sumW*sumXL - sumX*sumL) / D
		thisMin := (sumL2*sumX - sumL*sumXL) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var curErr float32
		for i, v := range x {
			diff := thisScale*float32(laux[i]) + thisMin - v
			curErr += weights[i] * diff * diff
		}
		if curErr < bestErr {
			copy(L, laux)
			bestErr, scale, lo = curErr, thisScale, thisMin
		}
	}
	return scale, -lo
}

// groupMaxEps is ggml's GROUP_MAX_EPS: a group this small quantizes to zero.
const groupMaxEps = 1e-15

// makeQXQuants is ggml's make_qx_quants with rmse_type 1 and no importance
// weights: symmetric codes L+nmax with L in [−nmax, nmax−1], the element of
// largest magnitude mapping to −nmax, then 18 nearby inverse scales tried
// to maximise the x²-weighted fit. It fills L (offset by nmax) and returns
// the scale.
func makeQXQuants(nmax int, x []float32, L []uint8) float32 {
	var amax, m float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, m = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	fit := func(iscale float32, store bool) (sumLX, sumL2 float32) {
		for i, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			if store {
				L[i] = uint8(l + nmax)
			}
			w := v * v
			sumLX += w * v * float32(l)
			sumL2 += w * float32(l) * float32(l)
		}
		return sumLX, sumL2
	}
	sumLX, sumL2 := fit(-float32(nmax)/m, true)
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := scale * sumLX
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale := -(float32(nmax) + 0.1*float32(is)) / m
		sumLX, sumL2 = fit(iscale, false)
		if sumL2 > 0 && sumLX*sumLX > best*sumL2 {
			fit(iscale, true)
			scale = sumLX / sumL2
			best = scale * sumLX
		}
	}
	return scale
}
