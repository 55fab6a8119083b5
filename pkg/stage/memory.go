package stage

// SealMemoryLimit is a soft Go memory limit (runtime/debug.SetMemoryLimit) for sealing the
// tree of an acquisition of acquisitionBytes: four times the acquisition plus 96 MiB. Seal
// verifies the host tree into memory (verify.Load holds every file's bytes and the index's
// parsed chunks while the copy is written), a live heap of about 2.9 times the acquisition at
// 100k records (613 MiB for 211 MiB); without a limit the collector lets the heap grow to
// twice that (1,454 MiB peak RSS). This limit leaves the collector about 1.4 times the live
// peak, which cost no measurable CPU (30.5 s against 30.1 s) and brought the peak to 946 MiB;
// the snapshot.MemoryLimit of the acquisition (518 MiB, below that live heap) would have the
// collector run almost continuously (64.6 s, 721 MiB). It is soft: a larger tree still seals,
// with more collection.
func SealMemoryLimit(acquisitionBytes int64) int64 {
	return 4*acquisitionBytes + 96<<20
}
