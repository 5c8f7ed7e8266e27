;; MinHash minima with 128-bit SIMD: for each salt s and the shingle hashes v[0..n),
;; min over i of fmix32(v[i] ^ s), unsigned — what MinHasher.signatureOfWordHashes computes in
;; JavaScript (src/curate/minhash.ts), four salts per vector. Compiled to minhash-simd.wasm by
;; `node scripts/build-wasm.ts`; test/minhash-simd.test.ts checks that the committed .wasm is
;; this file compiled and that both give the same signatures.
;;
;; Memory is the caller's to lay out: `salts` and `out` hold `groups * 4` 32-bit values,
;; `shingles` holds `n` (n >= 1). All three 16-byte aligned.
(module
  (memory (export "memory") 1)

  (func (export "minima") (param $shingles i32) (param $n i32) (param $salts i32) (param $groups i32) (param $out i32)
    (local $g i32) (local $p i32) (local $end i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $m0 v128) (local $m1 v128) (local $m2 v128) (local $m3 v128)
    (local $v v128) (local $h v128)
    (local.set $end (i32.add (local.get $shingles) (i32.shl (local.get $n) (i32.const 2))))

    ;; Sixteen salts per pass over the shingles (four independent chains), while there are.
    (block $quads_done
      (loop $quads
        (br_if $quads_done (i32.gt_u (i32.add (local.get $g) (i32.const 4)) (local.get $groups)))
        (local.set $p (i32.add (local.get $salts) (i32.shl (local.get $g) (i32.const 4))))
        (local.set $s0 (v128.load offset=0 (local.get $p)))
        (local.set $s1 (v128.load offset=16 (local.get $p)))
        (local.set $s2 (v128.load offset=32 (local.get $p)))
        (local.set $s3 (v128.load offset=48 (local.get $p)))
        (local.set $m0 (v128.const i32x4 -1 -1 -1 -1))
        (local.set $m1 (v128.const i32x4 -1 -1 -1 -1))
        (local.set $m2 (v128.const i32x4 -1 -1 -1 -1))
        (local.set $m3 (v128.const i32x4 -1 -1 -1 -1))
        (local.set $p (local.get $shingles))
        (block $each_done
          (loop $each
            (br_if $each_done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $v (v128.load32_splat (local.get $p)))
            ;; m0
            (local.set $h (v128.xor (local.get $v) (local.get $s0)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))
                                     (v128.const i32x4 0x85ebca6b 0x85ebca6b 0x85ebca6b 0x85ebca6b)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 13)))
                                     (v128.const i32x4 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35)))
            (local.set $m0 (i32x4.min_u (local.get $m0) (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))))
            ;; m1
            (local.set $h (v128.xor (local.get $v) (local.get $s1)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))
                                     (v128.const i32x4 0x85ebca6b 0x85ebca6b 0x85ebca6b 0x85ebca6b)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 13)))
                                     (v128.const i32x4 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35)))
            (local.set $m1 (i32x4.min_u (local.get $m1) (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))))
            ;; m2
            (local.set $h (v128.xor (local.get $v) (local.get $s2)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))
                                     (v128.const i32x4 0x85ebca6b 0x85ebca6b 0x85ebca6b 0x85ebca6b)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 13)))
                                     (v128.const i32x4 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35)))
            (local.set $m2 (i32x4.min_u (local.get $m2) (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))))
            ;; m3
            (local.set $h (v128.xor (local.get $v) (local.get $s3)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))
                                     (v128.const i32x4 0x85ebca6b 0x85ebca6b 0x85ebca6b 0x85ebca6b)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 13)))
                                     (v128.const i32x4 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35)))
            (local.set $m3 (i32x4.min_u (local.get $m3) (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (br $each)))
        (local.set $p (i32.add (local.get $out) (i32.shl (local.get $g) (i32.const 4))))
        (v128.store offset=0 (local.get $p) (local.get $m0))
        (v128.store offset=16 (local.get $p) (local.get $m1))
        (v128.store offset=32 (local.get $p) (local.get $m2))
        (v128.store offset=48 (local.get $p) (local.get $m3))
        (local.set $g (i32.add (local.get $g) (i32.const 4)))
        (br $quads)))

    ;; The last one to three groups of four salts, one per pass.
    (block $singles_done
      (loop $singles
        (br_if $singles_done (i32.ge_u (local.get $g) (local.get $groups)))
        (local.set $s0 (v128.load (i32.add (local.get $salts) (i32.shl (local.get $g) (i32.const 4)))))
        (local.set $m0 (v128.const i32x4 -1 -1 -1 -1))
        (local.set $p (local.get $shingles))
        (block $one_done
          (loop $one
            (br_if $one_done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $h (v128.xor (v128.load32_splat (local.get $p)) (local.get $s0)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))
                                     (v128.const i32x4 0x85ebca6b 0x85ebca6b 0x85ebca6b 0x85ebca6b)))
            (local.set $h (i32x4.mul (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 13)))
                                     (v128.const i32x4 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35 0xc2b2ae35)))
            (local.set $m0 (i32x4.min_u (local.get $m0) (v128.xor (local.get $h) (i32x4.shr_u (local.get $h) (i32.const 16)))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (br $one)))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $g) (i32.const 4))) (local.get $m0))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $singles)))
  )
)
