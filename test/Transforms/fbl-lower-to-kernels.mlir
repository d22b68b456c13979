// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// Register-tiled GEMM: one work-item per 4x4 block of C (16 / 4 n blocks
// along x, 8 / 4 m blocks along y), padded work-items skipped, C's init read
// as 4 texels, k walked 4 at a time with A and B read as 4 texels each, and
// the 16 accumulators stored as 4 texels.

// CHECK-LABEL: func.func @gemm(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x12xf32, #fbl.channel_packed<packed = 1>>
// CHECK-SAME:    %[[B:[^:]+]]: tensor<12x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK-SAME:    %[[C:[^:]+]]: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// CHECK:         %[[OUT:.+]] = tensor.empty() : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// The cost model's estimate of the kernel: 8 work-items each read 3 k-steps
// x (4 texels of A + 4 of B) and C's 4 texels, and write 4: 32 accesses
// each; 8 x 16 x 12 multiply-adds.
// CHECK:         %[[R:.+]] = fbl.dispatch @k0_gemm ins(%[[A]], %[[B]], %[[C]] : {{.*}}) outs(%[[OUT]] : {{.*}}) grid [4, 2, 1] workgroup [4, 2, 1] attributes {fbl.estimate = {fetches = 224 : i64, item_accesses = 3.200000e+01 : f64, misses = {{[0-9]+}} : i64, multiplies = 1536 : i64, time_ns = {{.*}} : f64, writes = 32 : i64}, fbl.gemm = array<i64: 1, 8, 16, 12, 8, 16>} {
// CHECK-NEXT:    ^bb0(%[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KC:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[X:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[Y:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      fbl.work_item_id 2
// CHECK-NEXT:      %[[MBLOCKS:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[INM:.+]] = arith.cmpi ult, %[[Y]], %[[MBLOCKS]] : index
// CHECK-NEXT:      %[[NBLOCKS:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[INN:.+]] = arith.cmpi ult, %[[X]], %[[NBLOCKS]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.andi %[[INN]], %[[INM]] : i1
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-COUNT-4:     fbl.load_texel %[[KC]][
// CHECK-NOT:         fbl.load_texel
// CHECK:             %[[STEP:.+]] = arith.constant 4 : index
// CHECK-NEXT:        %[[K:.+]] = arith.constant 12 : index
// CHECK-NEXT:        %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:        %[[ACC:.+]]:16 = scf.for %{{.+}} = %[[ZERO]] to %[[K]] step %[[STEP]] iter_args(
// CHECK-COUNT-4:       fbl.load_texel %[[KA]][
// CHECK-COUNT-4:       fbl.load_texel %[[KB]][
// CHECK-COUNT-64:      arith.mulf
// CHECK-NOT:           fbl.load_texel
// CHECK:               scf.yield
// CHECK-SAME:            : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT:        }
// CHECK:             %[[T0:.+]] = vector.from_elements %[[ACC]]#0, %[[ACC]]#1, %[[ACC]]#2, %[[ACC]]#3 : vector<4xf32>
// CHECK-NEXT:        fbl.store_texel %[[T0]], %[[KOUT]][
// CHECK:             %[[T3:.+]] = vector.from_elements %[[ACC]]#12, %[[ACC]]#13, %[[ACC]]#14, %[[ACC]]#15 : vector<4xf32>
// CHECK-NEXT:        fbl.store_texel %[[T3]], %[[KOUT]][
// CHECK-NEXT:      }
// CHECK-NEXT:    } -> tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
// CHECK-NEXT:    return %[[R]]

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @gemm(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>, %c: tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%c : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    return %0 : tensor<8x16xf32, #pc>
  }
}

// -----

// Local-tiled GEMM (nvidia-h200 has local_tiled_gemm; gemm_tile = [8, 2,
// 8]: 64x64 tiles of C in 8-deep slices): 8x8 work-groups, 2x2 blocks per
// work-item, no guard around the body (the grid is exact and everyone
// reaches the barriers). Two local buffers per operand, each k-major: a row
// of 16 texels along the tile per k of the slice. The first slice is staged
// before the loop; each step reads the next slice before multiplying out
// of the current buffer, stores it into the other and meets the others at
// one barrier; the last slice is multiplied after the loop. A and B are
// both packed along k here, so work-items stage whole 4x4 blocks (4 texel
// reads, transposed in registers into 4 row texels): 16 x 2 blocks a slice
// for 64 work-items, so the second half of the group reads a block again
// and stores nothing (scf.if). Each row's 16 blocks are permuted by an XOR
// (arith.xori), so that neighbouring work-items' stores into different rows
// fall on different banks. Per k, each work-item loads 2 texels of each
// tile (32 loads a slice).

// CHECK-LABEL: func.func @gemm_local(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<64x16xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<16x64xf32
// CHECK-SAME:    %[[C:[^:]+]]: tensor<64x64xf32
// CHECK:         fbl.dispatch @k0_gemm_local ins(%[[A]], %[[B]], %[[C]] : {{.*}}) grid [8, 8, 1] workgroup [8, 8, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KC:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      fbl.work_item_id 0
// CHECK-NEXT:      fbl.work_item_id 1
// CHECK-NEXT:      fbl.work_item_id 2
// CHECK:           fbl.local_id 0
// CHECK-NEXT:      fbl.local_id 1
// CHECK-NEXT:      fbl.group_id 0
// CHECK-NEXT:      fbl.group_id 1
// CHECK:           %[[ATILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK:           %[[BTILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK-NOT:       scf.if
// CHECK-COUNT-16:  fbl.load_texel %[[KC]][
// CHECK:           %[[AIN:.+]] = arith.cmpi ult, %{{.+}}, %[[UNITS:.+]] : index
// CHECK-COUNT-4:   fbl.load_texel %[[KA]][
// CHECK:           vector.from_elements
// CHECK:           arith.xori
// CHECK-COUNT-3:   vector.from_elements
// CHECK-COUNT-4:   fbl.load_texel %[[KB]][
// CHECK:           scf.if %[[AIN]] {
// CHECK-COUNT-4:     memref.store %{{.+}}, %[[ATILE]][
// CHECK-NEXT:      }
// CHECK:           scf.if
// CHECK-COUNT-4:     memref.store %{{.+}}, %[[BTILE]][
// CHECK-NEXT:      }
// CHECK-NEXT:      fbl.barrier
// CHECK:           %[[STEP:.+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[K:.+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[ACC:.+]]:64 = scf.for %{{.+}} = %[[ZERO]] to %[[K]] step %[[STEP]] iter_args(
// CHECK-COUNT-4:     fbl.load_texel %[[KA]][
// CHECK-COUNT-4:     fbl.load_texel %[[KB]][
// CHECK-COUNT-32:    memref.load
// CHECK-NOT:         fbl.load_texel
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[ATILE]][
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[BTILE]][
// CHECK:             fbl.barrier
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NOT:       fbl.barrier
// CHECK-COUNT-32:  memref.load
// CHECK-NOT:       fbl.barrier
// CHECK-COUNT-16:  fbl.store_texel %{{.+}}, %[[KOUT]][
// CHECK-NEXT:    } variants {
// CHECK:           math.fma
// CHECK:         } -> tensor<64x64xf32, #fbl.channel_packed<packed = 1>>
//
// The preset's gemm_variants follow the body: of [[8, 0], [0, 1], [12, 0]],
// stores after 8 k steps are this tile's own (local_k 8) and after 12 past
// its slice, so one variant: fma().

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
  func.func @gemm_local(%a: tensor<64x16xf32, #pc>, %b: tensor<16x64xf32, #pr>, %c: tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32, #pc>, tensor<16x64xf32, #pr>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    return %0 : tensor<64x64xf32, #pc>
  }
}

// -----

// store_after_k (the tile's sixth number, here 4 of the slice's 8 k steps):
// the next slice's texels, read at the step's top, are stored into the
// other buffer half way through the multiplication, not after it.

// CHECK-LABEL: func.func @gemm_local_store_after_k(
// CHECK:         fbl.dispatch @k0_gemm_local
// CHECK:           %[[ATILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK:           %[[BTILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK:           scf.for
// CHECK-COUNT-4:     fbl.load_texel
// CHECK-COUNT-4:     fbl.load_texel
// CHECK-COUNT-16:    memref.load
// CHECK-NOT:         memref.load
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[ATILE]][
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[BTILE]][
// CHECK-NOT:         fbl.barrier
// CHECK-COUNT-16:    memref.load
// CHECK-NOT:         memref.load
// CHECK:             fbl.barrier
// CHECK-NEXT:        scf.yield

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8, 8, 1, 4]>} {
  func.func @gemm_local_store_after_k(%a: tensor<64x16xf32, #pc>, %b: tensor<16x64xf32, #pr>, %c: tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32, #pc>, tensor<16x64xf32, #pr>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    return %0 : tensor<64x64xf32, #pc>
  }
}

// -----

// gemm_variants: each distinct variant once, none the same as the tile's
// own body ([0, 0]) and none storing at or past the slice's 8 k steps: of
// the six, [4, 0], [0, 1] and [4, 1] are built, in that order, each a body
// with the tile's arguments. [4, *] stores the next slice after 16 of the
// 32 loads a k step takes (4 of the 8 k steps); fma 1 multiplies and adds
// with math.fma, fma 0 with arith.mulf and arith.addf.

// CHECK-LABEL: func.func @gemm_local_variants(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} {
// CHECK:           scf.for
// CHECK-COUNT-32:    memref.load
// CHECK-NOT:         math.fma
// CHECK:             memref.store
// CHECK:         } variants {
// CHECK-NEXT:    ^bb0(%{{.+}}: tensor<64x16xf32, {{.*}}, %{{.+}}: tensor<16x64xf32, {{.*}}, %{{.+}}: tensor<64x64xf32, {{.*}}, %{{.+}}: tensor<64x64xf32, {{.*}}):
// CHECK:           scf.for
// CHECK-COUNT-16:    memref.load
// CHECK-NOT:         memref.load
// CHECK:             memref.store
// CHECK-NOT:         math.fma
// CHECK:         }, {
// CHECK:           scf.for
// CHECK-COUNT-32:    memref.load
// CHECK:             math.fma
// CHECK:             memref.store
// CHECK:         }, {
// CHECK:           scf.for
// CHECK-COUNT-16:    memref.load
// CHECK-NOT:         memref.load
// CHECK:             memref.store
// CHECK:             math.fma
// CHECK:         } -> tensor<64x64xf32
// CHECK-NOT:     }, {

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8], gemm_variants = [[4, 0], [0, 1], [4, 1], [4, 0], [0, 0], [8, 0]]>} {
  func.func @gemm_local_variants(%a: tensor<64x16xf32, #pc>, %b: tensor<16x64xf32, #pr>, %c: tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32, #pc>, tensor<16x64xf32, #pr>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    return %0 : tensor<64x64xf32, #pc>
  }
}

// -----

// Ragged edges: 60 rows and a k of 36 in 64x64 tiles and 8-deep slices
// (covered within an eighth). One work-group; C's init is read with rows
// past 60 moved to 0; A's staged texels past k 36 are read at 0 and
// zeroed, those past row 60 read past the image's edge (clamp_to_edge: the
// values reach only rows of C that are not stored), with no clamp in code;
// B's (N = 64 divides) are read as they are; the loop runs 4 slices and
// the last (5th, half outside) one after it; each block's texels are
// stored only where its rows start inside M (no guard on N).
// CHECK-LABEL: func.func @gemm_local_ragged(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [8, 8, 1] workgroup [8, 8, 1]
// CHECK:           %[[ROWS:.+]] = arith.constant 60 : index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi ult, %[[M0:.+]], %[[ROWS]] : index
// CHECK:           arith.select %[[IN]], %[[M0]], %{{.+}} : index
// CHECK:           %[[K36:.+]] = arith.constant 36 : index
// CHECK-NEXT:      %[[INK:.+]] = arith.cmpi ult, %{{.+}}, %[[K36]] : index
// CHECK-NOT:       arith.andi
// CHECK:           %[[READ:.+]] = fbl.load_texel %{{.+}} {clamp_to_edge} : tensor<60x36xf32
// CHECK:           arith.select %[[INK]], %[[READ]], %{{.+}} : vector<4xf32>
// CHECK:           fbl.load_texel %{{.+}}] : tensor<36x64xf32
// CHECK:           fbl.barrier
// CHECK-NEXT:      arith.constant 8 : index
// CHECK-NEXT:      %[[END:.+]] = arith.constant 32 : index
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[END]] step
// CHECK:           scf.if %{{.+}} {
// CHECK-COUNT-4:     fbl.store_texel
// CHECK-NEXT:      }
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
  func.func @gemm_local_ragged(%a: tensor<60x36xf32, #pc>, %b: tensor<36x64xf32, #pr>, %c: tensor<60x64xf32, #pc>) -> tensor<60x64xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<60x36xf32, #pc>, tensor<36x64xf32, #pr>) outs(%c : tensor<60x64xf32, #pc>) -> tensor<60x64xf32, #pc>
    return %0 : tensor<60x64xf32, #pc>
  }
}

// -----

// A packed along m (a transposed activation: TN) and B along n: each of
// their texels is a texel of a k row of the tile, so work-items stage
// texels (2 of each a slice: 16 x 8 texels for 64 work-items, no guard),
// in runs of 8 neighbouring blocks, and store them as read into rows of 16
// texels, unpermuted.
// CHECK-LABEL: func.func @gemm_local_a_by_m(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [8, 8, 1] workgroup [8, 8, 1]
// CHECK:           %[[ATILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK-NEXT:      %[[BTILE:.+]] = memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
// CHECK-NOT:       memref.alloca
// CHECK-NOT:       scf.if
// CHECK-NOT:       vector.from_elements
// CHECK-COUNT-2:   %[[T:.+]] = fbl.load_texel
// CHECK-NOT:       vector.from_elements
// CHECK-NOT:       arith.xori
// CHECK:           memref.store %{{.+}}, %[[ATILE]][
// CHECK:           scf.for
#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
  func.func @gemm_local_a_by_m(%a: tensor<16x64xf32, #pc>, %b: tensor<16x64xf32, #pc>, %c: tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc> {
    %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : tensor<16x64xf32, #pc>, tensor<16x64xf32, #pc>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    return %0 : tensor<64x64xf32, #pc>
  }
}

// -----

// Shape classes: below 16384 elements of C a GEMM takes gemm_tile ([8, 1, 8]:
// 32x32 tiles, a 64x64 C is 2x2 groups of 8x8); from 16384 the class's
// [8, 2, 8] (64x64 tiles, a 1024x1024 C is 16x16 groups).
// CHECK-LABEL: func.func @gemm_classes(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [16, 16, 1] workgroup [8, 8, 1]
// CHECK:           memref.alloca() : memref<2x8x8xvector<4xf32>, 3>
// CHECK:         fbl.dispatch @k1_gemm_local {{.*}} grid [128, 128, 1] workgroup [8, 8, 1]
// CHECK:           memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8], gemm_tile_classes = [[16384, 8, 2, 8]]>} {
  func.func @gemm_classes(%a: tensor<64x16xf32, #pc>, %b: tensor<16x64xf32, #pr>, %c: tensor<64x64xf32, #pc>,
                          %a2: tensor<1024x16xf32, #pc>, %b2: tensor<16x1024xf32, #pr>, %c2: tensor<1024x1024xf32, #pc>)
      -> (tensor<64x64xf32, #pc>, tensor<1024x1024xf32, #pc>) {
    %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32, #pc>, tensor<16x64xf32, #pr>) outs(%c : tensor<64x64xf32, #pc>) -> tensor<64x64xf32, #pc>
    %1 = linalg.matmul ins(%a2, %b2 : tensor<1024x16xf32, #pc>, tensor<16x1024xf32, #pr>) outs(%c2 : tensor<1024x1024xf32, #pc>) -> tensor<1024x1024xf32, #pc>
    return %0, %1 : tensor<64x64xf32, #pc>, tensor<1024x1024xf32, #pc>
  }
}

// -----

// A class with own_launch marks the GEMMs that take its tile
// fbl.own_launch (fbl-merge-dispatches leaves them alone); a GEMM of the
// class that its tile does not cover falls back to gemm_tile, unmarked.
// CHECK-LABEL: func.func @gemm_classes_own_launch(
// fbl.gemm says which GEMM each computes (batch, m, n, k) and the rows and
// columns of C a work-group covers: 128x128, and 32x32 for the fallback.
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [256, 256, 1] workgroup [16, 16, 1] attributes {{{.*}}fbl.gemm = array<i64: 1, 2048, 2048, 16, 128, 128>, fbl.own_launch}
// CHECK:         fbl.dispatch @k1_gemm_local {{.*}} grid [40, 40, 1] workgroup [8, 8, 1]
// CHECK-NOT:     fbl.own_launch
// CHECK-SAME:    fbl.gemm = array<i64: 1, 160, 160, 16, 32, 32>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8], gemm_tile_classes = [[16384, 16, 2, 16, 16, 1, 0, 2, 1]]>} {
  func.func @gemm_classes_own_launch(%a: tensor<2048x16xf32, #pc>, %b: tensor<16x2048xf32, #pr>, %c: tensor<2048x2048xf32, #pc>,
                                     %a2: tensor<160x16xf32, #pc>, %b2: tensor<16x160xf32, #pr>, %c2: tensor<160x160xf32, #pc>)
      -> (tensor<2048x2048xf32, #pc>, tensor<160x160xf32, #pc>) {
    %0 = linalg.matmul ins(%a, %b : tensor<2048x16xf32, #pc>, tensor<16x2048xf32, #pr>) outs(%c : tensor<2048x2048xf32, #pc>) -> tensor<2048x2048xf32, #pc>
    %1 = linalg.matmul ins(%a2, %b2 : tensor<160x16xf32, #pc>, tensor<16x160xf32, #pr>) outs(%c2 : tensor<160x160xf32, #pc>) -> tensor<160x160xf32, #pc>
    return %0, %1 : tensor<2048x2048xf32, #pc>, tensor<160x160xf32, #pc>
  }
}

// -----

// A class's tile only where the cost model does not find it slower than the
// smaller class's at the GEMM's own shape: a class is tuned on a few shapes.
// Here a 1024x1024 C in 128x128 tiles would be 64 groups for the H200's 132
// compute units; it keeps gemm_tile's 32x32 (1024 groups), unmarked.
// CHECK-LABEL: func.func @gemm_classes_slower(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [256, 256, 1] workgroup [8, 8, 1]
// CHECK-NOT:     fbl.own_launch
// CHECK-SAME:    fbl.gemm = array<i64: 1, 1024, 1024, 16, 32, 32>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8], gemm_tile_classes = [[16384, 16, 2, 16, 16, 1, 0, 2, 1]]>} {
  func.func @gemm_classes_slower(%a: tensor<1024x16xf32, #pc>, %b: tensor<16x1024xf32, #pr>, %c: tensor<1024x1024xf32, #pc>)
      -> tensor<1024x1024xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<1024x16xf32, #pc>, tensor<16x1024xf32, #pr>) outs(%c : tensor<1024x1024xf32, #pc>) -> tensor<1024x1024xf32, #pc>
    return %0 : tensor<1024x1024xf32, #pc>
  }
}

// -----

// The H200 preset's 128x128 class (from 4M elements of C, tuned at 2048^2)
// at Whisper's 12000x384x384, where the cost model times it a third slower
// than 64x64: the GEMM keeps the 1M class's 64x64 tiles; 2048x2048 takes
// 128x128. A class tile the model times slower by less than 5% is taken
// (its order was the device's in about two pairs of three there): the
// transposed-A 12000x1536x384 takes the 96x96 class, though the model times
// 128x128 tiles 2-3% faster than 64x64 and 96x96.
// CHECK-LABEL: func.func @gemm_classes_preset(
// CHECK:         fbl.dispatch @k0_gemm_local
// CHECK-NOT:     fbl.own_launch
// CHECK-SAME:    fbl.gemm = array<i64: 1, 12000, 384, 384, 64, 64>
// CHECK:         fbl.dispatch @k1_gemm_local
// CHECK-SAME:    fbl.gemm = array<i64: 1, 2048, 2048, 64, 128, 128>, fbl.own_launch
// CHECK:         fbl.dispatch @k2_gemm_local
// CHECK-SAME:    fbl.gemm = array<i64: 1, 12000, 1536, 384, 96, 96>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @gemm_classes_preset(%a: tensor<12000x384xf32, #pc>, %b: tensor<384x384xf32, #pr>, %c: tensor<12000x384xf32, #pc>,
                                 %a2: tensor<2048x64xf32, #pc>, %b2: tensor<64x2048xf32, #pr>, %c2: tensor<2048x2048xf32, #pc>,
                                 %a3: tensor<384x12000xf32, #pc>, %b3: tensor<384x1536xf32, #pc>, %c3: tensor<12000x1536xf32, #pc>)
      -> (tensor<12000x384xf32, #pc>, tensor<2048x2048xf32, #pc>, tensor<12000x1536xf32, #pc>) {
    %0 = linalg.matmul ins(%a, %b : tensor<12000x384xf32, #pc>, tensor<384x384xf32, #pr>) outs(%c : tensor<12000x384xf32, #pc>) -> tensor<12000x384xf32, #pc>
    %1 = linalg.matmul ins(%a2, %b2 : tensor<2048x64xf32, #pc>, tensor<64x2048xf32, #pr>) outs(%c2 : tensor<2048x2048xf32, #pc>) -> tensor<2048x2048xf32, #pc>
    %2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%a3, %b3 : tensor<384x12000xf32, #pc>, tensor<384x1536xf32, #pc>) outs(%c3 : tensor<12000x1536xf32, #pc>) -> tensor<12000x1536xf32, #pc>
    return %0, %1, %2 : tensor<12000x384xf32, #pc>, tensor<2048x2048xf32, #pc>, tensor<12000x1536xf32, #pc>
  }
}

// -----

// A batched GEMM's batches count: 256 batches of a 64x64 C are 1M elements
// of C, so they take the class's [8, 2, 8] (one 64x64 group per batch) where
// one 64x64 C takes gemm_tile (a split-K GEMM's chunks likewise).
// CHECK-LABEL: func.func @gemm_classes_batched(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [8, 8, 256] workgroup [8, 8, 1]
// CHECK-SAME:      fbl.gemm = array<i64: 256, 64, 64, 16, 64, 64>
// CHECK:           memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
#bc = #fbl.channel_packed<packed = 2>
#br = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8], gemm_tile_classes = [[1048576, 8, 2, 8]]>} {
  func.func @gemm_classes_batched(%a: tensor<256x64x16xf32, #bc>, %b: tensor<256x16x64xf32, #br>, %c: tensor<256x64x64xf32, #bc>)
      -> tensor<256x64x64xf32, #bc> {
    %0 = linalg.batch_matmul ins(%a, %b : tensor<256x64x16xf32, #bc>, tensor<256x16x64xf32, #br>) outs(%c : tensor<256x64x64xf32, #bc>) -> tensor<256x64x64xf32, #bc>
    return %0 : tensor<256x64x64xf32, #bc>
  }
}

// -----

// A larger class's tile only where it pads C no more than the smaller
// class's: 1536x1536 takes [8, 3, 8] (96x96 tiles, 16x16 groups; 64x64
// tiles divide it too), 2048x2048 keeps [8, 2, 8] (64 divides it; 96 would
// cover it within an eighth, padded to 2112).
// CHECK-LABEL: func.func @gemm_classes_padding(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [128, 128, 1] workgroup [8, 8, 1]
// CHECK-SAME:      fbl.gemm = array<i64: 1, 1536, 1536, 16, 96, 96>
// CHECK:           memref.alloca() : memref<2x8x24xvector<4xf32>, 3>
// CHECK:         fbl.dispatch @k1_gemm_local {{.*}} grid [256, 256, 1] workgroup [8, 8, 1]
// CHECK-SAME:      fbl.gemm = array<i64: 1, 2048, 2048, 16, 64, 64>
// CHECK:           memref.alloca() : memref<2x8x16xvector<4xf32>, 3>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8], gemm_tile_classes = [[16384, 8, 2, 8], [32768, 8, 3, 8]]>} {
  func.func @gemm_classes_padding(%a: tensor<1536x16xf32, #pc>, %b: tensor<16x1536xf32, #pr>, %c: tensor<1536x1536xf32, #pc>,
                                  %a2: tensor<2048x16xf32, #pc>, %b2: tensor<16x2048xf32, #pr>, %c2: tensor<2048x2048xf32, #pc>)
      -> (tensor<1536x1536xf32, #pc>, tensor<2048x2048xf32, #pc>) {
    %0 = linalg.matmul ins(%a, %b : tensor<1536x16xf32, #pc>, tensor<16x1536xf32, #pr>) outs(%c : tensor<1536x1536xf32, #pc>) -> tensor<1536x1536xf32, #pc>
    %1 = linalg.matmul ins(%a2, %b2 : tensor<2048x16xf32, #pc>, tensor<16x2048xf32, #pr>) outs(%c2 : tensor<2048x2048xf32, #pc>) -> tensor<2048x2048xf32, #pc>
    return %0, %1 : tensor<1536x1536xf32, #pc>, tensor<2048x2048xf32, #pc>
  }
}

// -----

// An oblong work-item (2 x 4 blocks) makes an oblong tile: 8x8 work-items
// cover 64 rows and 128 columns of C, which fbl.gemm gives after the GEMM's
// batch, m, n and k.
// CHECK-LABEL: func.func @gemm_oblong_tile(
// CHECK:         fbl.dispatch @k0_gemm_local {{.*}} grid [16, 16, 1] workgroup [8, 8, 1]
// CHECK-SAME:      fbl.gemm = array<i64: 1, 128, 256, 24, 64, 128>
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8, 8, 0, 0, 4], gemm_tile_classes = []>} {
  func.func @gemm_oblong_tile(%a: tensor<128x24xf32, #pc>, %b: tensor<24x256xf32, #pr>, %c: tensor<128x256xf32, #pc>)
      -> tensor<128x256xf32, #pc> {
    %0 = linalg.matmul ins(%a, %b : tensor<128x24xf32, #pc>, tensor<24x256xf32, #pr>) outs(%c : tensor<128x256xf32, #pc>) -> tensor<128x256xf32, #pc>
    return %0 : tensor<128x256xf32, #pc>
  }
}

// -----

// Elementwise: one work-item per output texel (8 / 4 x 4 texels) computing
// its 4 channels together (texels of tile padding, none here, are zero). x
// and the bias are packed along j, the loop of the output's channels: one
// whole-texel fetch each serves the 4 channels (channel c holds channel c's
// element), 2 x 8 fetches in all; the body is inlined per channel.

// CHECK-LABEL: func.func @bias_tanh(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<8xf32
// CHECK:         fbl.dispatch @k0_generic ins(%[[X]], %[[B]] : {{.*}}) grid [2, 4, 1] workgroup [2, 4, 1] attributes {fbl.estimate = {fetches = 16 : i64, {{.*}}, writes = 8 : i64}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[TX:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[TY:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      %[[TL:.+]] = fbl.work_item_id 2
// CHECK:           scf.if
// CHECK:             %[[TEXEL:.+]] = scf.if %{{.+}} -> (vector<4xf32>) {
// CHECK-NOT:           fbl.load_texel
// CHECK:               %[[XT:.+]] = fbl.load_texel %[[KX]][
// CHECK-NOT:           fbl.load_texel
// CHECK:               %[[BT:.+]] = fbl.load_texel %[[KB]][
// CHECK-NEXT:          %[[X0:.+]] = vector.extract %[[XT]][0] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[B0:.+]] = vector.extract %[[BT]][0] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[S0:.+]] = arith.addf %[[X0]], %[[B0]] : f32
// CHECK-NEXT:          %[[CH0:.+]] = math.tanh %[[S0]] : f32
// CHECK-NEXT:          vector.extract %[[XT]][1]
// CHECK-NEXT:          vector.extract %[[BT]][1]
// CHECK-NEXT:          arith.addf
// CHECK-NEXT:          %[[CH1:.+]] = math.tanh
// CHECK-NEXT:          vector.extract %[[XT]][2]
// CHECK-NEXT:          vector.extract %[[BT]][2]
// CHECK-NEXT:          arith.addf
// CHECK-NEXT:          %[[CH2:.+]] = math.tanh
// CHECK-NEXT:          vector.extract %[[XT]][3]
// CHECK-NEXT:          vector.extract %[[BT]][3]
// CHECK-NEXT:          arith.addf
// CHECK-NEXT:          %[[CH3:.+]] = math.tanh
// CHECK:               %[[V:.+]] = vector.from_elements %[[CH0]], %[[CH1]], %[[CH2]], %[[CH3]] : vector<4xf32>
// CHECK-NEXT:          scf.yield %[[V]] : vector<4xf32>
// CHECK-NEXT:        } else {
// CHECK-NEXT:          %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          %[[PAD:.+]] = vector.from_elements %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]
// CHECK-NEXT:          scf.yield %[[PAD]] : vector<4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        fbl.store_texel %[[TEXEL]], %[[KOUT]][%[[TL]], %[[TY]], %[[TX]]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @bias_tanh(%x: tensor<4x8xf32, #pc>, %b: tensor<8xf32, #fbl.channel_packed<packed = 0>>) -> tensor<4x8xf32, #pc> {
    %e = tensor.empty() : tensor<4x8xf32, #pc>
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %b : tensor<4x8xf32, #pc>, tensor<8xf32, #fbl.channel_packed<packed = 0>>) outs(%e : tensor<4x8xf32, #pc>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      %t = math.tanh %s : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32, #pc>
    return %0 : tensor<4x8xf32, #pc>
  }
}

// -----

// Row sums: one work-item per output texel (4 rows), starting from the init
// (one texel for the 4 channels). x is packed along j, the reduced loop: j
// is walked 4 at a time, each row's texel fetched once per step and its 4
// channels added in order (the op's order of additions), the 4 rows'
// chains interleaved. Fetches: 1 + 4 rows x 2 steps.

// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[INIT:[^:]+]]: tensor<4xf32
// CHECK:         fbl.dispatch @k0_generic ins(%[[X]], %[[INIT]] : {{.*}}) grid [1, 1, 1] workgroup [1, 1, 1] attributes {fbl.estimate = {fetches = 9 : i64, {{.*}}, writes = 1 : i64}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KINIT:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             scf.if %{{.+}} -> (vector<4xf32>) {
// CHECK:               %[[IT:.+]] = fbl.load_texel %[[KINIT]][
// CHECK-NEXT:          %[[I0:.+]] = vector.extract %[[IT]][0] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[I1:.+]] = vector.extract %[[IT]][1] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[I2:.+]] = vector.extract %[[IT]][2] : f32 from vector<4xf32>
// CHECK-NEXT:          %[[I3:.+]] = vector.extract %[[IT]][3] : f32 from vector<4xf32>
// CHECK:               %[[N:.+]] = arith.constant 8 : index
// CHECK-NEXT:          %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-NEXT:          %[[SUM:.+]]:4 = scf.for %[[J:.+]] = %{{.+}} to %[[N]] step %[[FOUR]] iter_args(%[[A0:.+]] = %[[I0]], %[[A1:.+]] = %[[I1]], %[[A2:.+]] = %[[I2]], %[[A3:.+]] = %[[I3]]) -> (f32, f32, f32, f32) {
// CHECK:                 %[[R0:.+]] = fbl.load_texel %[[KX]][
// CHECK:                 %[[R1:.+]] = fbl.load_texel %[[KX]][
// CHECK:                 %[[R2:.+]] = fbl.load_texel %[[KX]][
// CHECK:                 %[[R3:.+]] = fbl.load_texel %[[KX]][
// CHECK-NOT:             fbl.load_texel
// CHECK:                 %[[E00:.+]] = vector.extract %[[R0]][0] : f32 from vector<4xf32>
// CHECK-NEXT:            %[[S00:.+]] = arith.addf %[[A0]], %[[E00]] : f32
// CHECK:                 %[[E01:.+]] = vector.extract %[[R1]][0] : f32 from vector<4xf32>
// CHECK-NEXT:            arith.addf %[[A1]], %[[E01]] : f32
// CHECK:                 %[[E10:.+]] = vector.extract %[[R0]][1] : f32 from vector<4xf32>
// CHECK:                 %[[S10:.+]] = arith.addf %[[S00]], %[[E10]] : f32
// CHECK:                 %[[E20:.+]] = vector.extract %[[R0]][2] : f32 from vector<4xf32>
// CHECK:                 %[[S20:.+]] = arith.addf %[[S10]], %[[E20]] : f32
// CHECK:                 %[[E30:.+]] = vector.extract %[[R0]][3] : f32 from vector<4xf32>
// CHECK:                 %[[S30:.+]] = arith.addf %[[S20]], %[[E30]] : f32
// CHECK:                 scf.yield %[[S30]], %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, f32
// CHECK-NEXT:          }
// CHECK:               %[[V:.+]] = vector.from_elements %[[SUM]]#0, %[[SUM]]#1, %[[SUM]]#2, %[[SUM]]#3 : vector<4xf32>
// CHECK-NEXT:          scf.yield %[[V]] : vector<4xf32>
// CHECK:             fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @row_sum(%x: tensor<4x8xf32, #pc>, %z: tensor<4xf32, #p0>) -> tensor<4xf32, #p0> {
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32, #pc>) outs(%z : tensor<4xf32, #p0>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32, #p0>
    return %0 : tensor<4xf32, #p0>
  }
}

// -----

// Relayout between packings (4x8 packed along columns to packed along
// rows): a work-item per 4x4 block (2 blocks) reads 4 whole texels of the
// source and writes 4 of the destination, transposed in registers.

// CHECK-LABEL: func.func @relayout(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
// CHECK-NOT:     tensor.empty() : tensor<4x8xf32>
// CHECK:         fbl.dispatch @k0_relayout ins(%[[X]] : {{.*}}) outs(%{{.+}} : tensor<4x8xf32, #fbl.channel_packed<packed = 0>>) grid [1, 2, 1] workgroup [1, 2, 1] attributes {fbl.estimate = {fetches = 8 : i64, {{.*}}, writes = 8 : i64}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             %[[T0:.+]] = fbl.load_texel %[[KX]][
// CHECK:             %[[T1:.+]] = fbl.load_texel %[[KX]][
// CHECK:             %[[T2:.+]] = fbl.load_texel %[[KX]][
// CHECK:             %[[T3:.+]] = fbl.load_texel %[[KX]][
// CHECK-NEXT:        %[[A:.+]] = vector.extract %[[T0]][0]
// CHECK-NEXT:        %[[B:.+]] = vector.extract %[[T1]][0]
// CHECK-NEXT:        %[[C:.+]] = vector.extract %[[T2]][0]
// CHECK-NEXT:        %[[D:.+]] = vector.extract %[[T3]][0]
// CHECK:             %[[ROW0:.+]] = vector.from_elements %[[A]], %[[B]], %[[C]], %[[D]] : vector<4xf32>
// CHECK:             fbl.store_texel %[[ROW0]], %[[KOUT]][
// CHECK-COUNT-3:     fbl.store_texel %{{.+}}, %[[KOUT]][
// CHECK-NOT:         fbl.load_texel

module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @relayout(%x: tensor<4x8xf32, #fbl.channel_packed<packed = 1>>) -> tensor<4x8xf32, #fbl.channel_packed<packed = 0>> {
    // Loads the tensor dialect, which the pass creates ops of (tensor.empty)
    // without declaring it.
    %unused = tensor.empty() : tensor<4x8xf32>
    %0 = fbl.relayout %x : tensor<4x8xf32, #fbl.channel_packed<packed = 1>> to tensor<4x8xf32, #fbl.channel_packed<packed = 0>>
    return %0 : tensor<4x8xf32, #fbl.channel_packed<packed = 0>>
  }
}

// -----

// extract_slice: a copy kernel reading the source at index * stride + offset.

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x12xf32
// CHECK:         fbl.dispatch @k0_slice ins(%[[X]] : {{.*}}) outs(%{{.+}} : tensor<4x8xf32, {{.*}}) grid [2, 4, 1] workgroup [2, 4, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK-NEXT:          %[[OFF0:.+]] = arith.constant 2 : index
// CHECK-NEXT:          %[[I:.+]] = arith.addi %{{.+}}, %[[OFF0]] : index
// CHECK-NEXT:          %[[OFF1:.+]] = arith.constant 4 : index
// CHECK-NEXT:          %[[J:.+]] = arith.addi %{{.+}}, %[[OFF1]] : index
// CHECK:               fbl.load_texel %[[KX]][
// CHECK-COUNT-3:     fbl.load_texel %[[KX]][
// CHECK:             fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @slice(%x: tensor<8x12xf32, #pc>) -> tensor<4x8xf32, #pc> {
    %0 = tensor.extract_slice %x[2, 4] [4, 8] [1, 1] : tensor<8x12xf32, #pc> to tensor<4x8xf32, #pc>
    return %0 : tensor<4x8xf32, #pc>
  }
}

// -----

// insert_slice: each element comes from the source inside the inserted
// region, from the destination elsewhere. The 32 work-items take two groups
// of a wave (16 on pocl-cpu), one for each of the target's 2 compute units.

// CHECK-LABEL: func.func @insert_slice(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32
// CHECK-SAME:    %[[D:[^:]+]]: tensor<8x12xf32
// CHECK:         fbl.dispatch @k0_slice ins(%[[X]], %[[D]] : {{.*}}) grid [4, 8, 1] workgroup [4, 4, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KX:arg[0-9]+]]: {{.*}}, %[[KD:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK:             arith.cmpi sge
// CHECK:             arith.cmpi slt
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               fbl.load_texel %[[KX]][
// CHECK:             } else {
// CHECK:               fbl.load_texel %[[KD]][
// CHECK:             fbl.store_texel %{{.+}}, %[[KOUT]][

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @insert_slice(%x: tensor<4x8xf32, #pc>, %d: tensor<8x12xf32, #pc>) -> tensor<8x12xf32, #pc> {
    %0 = tensor.insert_slice %x into %d[2, 4] [4, 8] [1, 1] : tensor<4x8xf32, #pc> into tensor<8x12xf32, #pc>
    return %0 : tensor<8x12xf32, #pc>
  }
}

// -----

// A chain of inserts, each read only by the next (tensor.concat and im2col
// take this form), is one kernel: an element comes from the last insert
// whose region holds it, else from the first one's destination (zero for a
// tensor.empty, which is never allocated). The third insert's result is read
// twice, so the fourth starts a chain of its own.

// CHECK-LABEL: func.func @insert_chain(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x4xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<8x4xf32
// CHECK-SAME:    %[[C:[^:]+]]: tensor<8x4xf32
// CHECK:         %[[K0:.+]] = fbl.dispatch @k0_slice ins(%[[A]], %[[B]], %[[C]] : {{.*}}) outs(
// CHECK-NEXT:    ^bb0(%[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %[[KC:arg[0-9]+]]: {{.*}}, %{{arg[0-9]+}}: {{.*}}):
// The last insert is checked first.
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               fbl.load_texel %[[KC]][
// CHECK:             } else {
// CHECK:               scf.if %{{.+}} -> (f32) {
// CHECK:                 fbl.load_texel %[[KB]][
// CHECK:               } else {
// CHECK:                 scf.if %{{.+}} -> (f32) {
// CHECK:                   fbl.load_texel %[[KA]][
// CHECK:                 } else {
// CHECK:                   arith.constant 0.000000e+00 : f32
// CHECK:         %[[K1:.+]] = fbl.dispatch @k1_slice ins(%[[A]], %[[K0]] : {{.*}})
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K0]], %[[K1]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @insert_chain(%a: tensor<8x4xf32, #pc>, %b: tensor<8x4xf32, #pc>, %c: tensor<8x4xf32, #pc>) -> (tensor<8x12xf32, #pc>, tensor<8x12xf32, #pc>) {
    %e = tensor.empty() : tensor<8x12xf32, #pc>
    %0 = tensor.insert_slice %a into %e[0, 0] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    %1 = tensor.insert_slice %b into %0[0, 4] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    %2 = tensor.insert_slice %c into %1[0, 8] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    %3 = tensor.insert_slice %a into %2[0, 2] [8, 4] [1, 1] : tensor<8x4xf32, #pc> into tensor<8x12xf32, #pc>
    return %2, %3 : tensor<8x12xf32, #pc>, tensor<8x12xf32, #pc>
  }
}

// -----

// A sum of slices inserted into zeros (how autodiff sums the gradients of a
// convolution's overlapping window reads: col2im) is one kernel adding, per
// element, each insert's source inside its region and zero elsewhere, plus
// the other addends; the zero fill, the inserts and the inner add are gone.

// CHECK-LABEL: func.func @insert_sum(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<4x4xf32
// CHECK-SAME:    %[[B:[^:]+]]: tensor<4x4xf32
// CHECK-SAME:    %[[D:[^:]+]]: tensor<6x6xf32
// CHECK-NOT:     fbl.dispatch
// CHECK:         %[[K:.+]] = fbl.dispatch @k0_insert_sum ins(%[[D]], %[[A]], %[[B]] : {{.*}}) outs(
// CHECK-NEXT:    ^bb0(%[[KD:arg[0-9]+]]: {{.*}}, %[[KA:arg[0-9]+]]: {{.*}}, %[[KB:arg[0-9]+]]: {{.*}}, %{{arg[0-9]+}}: {{.*}}):
// CHECK:             fbl.load_texel %[[KD]][
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               fbl.load_texel %[[KA]][
// CHECK:             } else {
// CHECK:               arith.constant 0.000000e+00 : f32
// CHECK:             arith.addf
// CHECK:             scf.if %{{.+}} -> (f32) {
// CHECK:               fbl.load_texel %[[KB]][
// CHECK:             arith.addf
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @insert_sum(%a: tensor<4x4xf32, #pc>, %b: tensor<4x4xf32, #pc>, %d: tensor<6x6xf32, #pc>) -> tensor<6x6xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<6x6xf32, #pc>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x6xf32, #pc>) -> tensor<6x6xf32, #pc>
    %0 = tensor.insert_slice %a into %z[0, 0] [4, 4] [1, 1] : tensor<4x4xf32, #pc> into tensor<6x6xf32, #pc>
    %1 = tensor.insert_slice %b into %z[2, 2] [4, 4] [1, 1] : tensor<4x4xf32, #pc> into tensor<6x6xf32, #pc>
    %2 = linalg.add ins(%d, %0 : tensor<6x6xf32, #pc>, tensor<6x6xf32, #pc>) outs(%e : tensor<6x6xf32, #pc>) -> tensor<6x6xf32, #pc>
    %3 = linalg.add ins(%2, %1 : tensor<6x6xf32, #pc>, tensor<6x6xf32, #pc>) outs(%e : tensor<6x6xf32, #pc>) -> tensor<6x6xf32, #pc>
    return %3 : tensor<6x6xf32, #pc>
  }
}

// -----

// Scatter loop: the column loop indexes every access of the buffer, so its
// 4 iterations are the work-items; each copies its column of the initial
// buffer, then runs the row loop in place. A target that runs only 4
// work-items at once gets no more.

// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:    %[[G:[^:]+]]: tensor<5x4xf32
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<5xi64, #fbl.buffer>
// CHECK-SAME:    %[[INIT:[^:]+]]: tensor<6x4xf32, #fbl.buffer>
// CHECK:         fbl.dispatch @k0_scatter ins(%[[INIT]], %[[IDS]], %[[G]] : {{.*}}) outs(%{{.+}} : tensor<6x4xf32, #fbl.buffer>) grid [4, 1, 1] workgroup [4, 1, 1] attributes {fbl.estimate = {{.*}}} {
// CHECK-NEXT:    ^bb0(%[[KINIT:arg[0-9]+]]: {{.*}}, %[[KIDS:arg[0-9]+]]: {{.*}}, %[[KG:arg[0-9]+]]: {{.*}}, %[[KOUT:arg[0-9]+]]: {{.*}}):
// CHECK-NEXT:      %[[COL:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[CHUNK:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      %[[NCHUNKS:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[INCHUNK:.+]] = arith.cmpi ult, %[[CHUNK]], %[[NCHUNKS]] : index
// CHECK-NEXT:      %[[NCOLS:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[INCOL:.+]] = arith.cmpi ult, %[[COL]], %[[NCOLS]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.andi %[[INCOL]], %[[INCHUNK]] : i1
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK:             %[[ROWS:.+]] = arith.constant 6 : index
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[ROWS]] step %{{.+}} {
// CHECK:               %[[V:.+]] = fbl.load_element %[[KINIT]][%{{.+}}] : tensor<6x4xf32, #fbl.buffer> -> f32
// CHECK-NEXT:          fbl.store_element %[[V]], %[[KOUT]][%{{.+}}]
// CHECK-NEXT:        }
// CHECK:             scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:               %[[ID:.+]] = fbl.load_element %[[KIDS]][%{{.+}}] : tensor<5xi64, #fbl.buffer> -> i64
// CHECK-NEXT:          %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:               fbl.load_texel %[[KG]][
// CHECK:               %[[OLD:.+]] = fbl.load_element %[[KOUT]][%{{.+}}]
// CHECK-NEXT:          %[[NEW:.+]] = arith.addf %[[OLD]], %{{.+}} : f32
// CHECK:               fbl.store_element %[[NEW]], %[[KOUT]][%{{.+}}]
// CHECK-NEXT:        }
// CHECK-NEXT:      }

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu", compute_units = 1, resident_items = 4>} {
  func.func @scatter_add(%g: tensor<5x4xf32, #pc>, %ids: tensor<5xi64, #fbl.buffer>, %init: tensor<6x4xf32, #fbl.buffer>) -> tensor<6x4xf32, #fbl.buffer> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %0 = scf.for %i = %c0 to %c5 step %c1 iter_args(%t = %init) -> (tensor<6x4xf32, #fbl.buffer>) {
      %1 = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (tensor<6x4xf32, #fbl.buffer>) {
        %id = tensor.extract %ids[%i] : tensor<5xi64, #fbl.buffer>
        %row = arith.index_cast %id : i64 to index
        %v = tensor.extract %g[%i, %j] : tensor<5x4xf32, #pc>
        %old = tensor.extract %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        %s = arith.addf %old, %v : f32
        %ins = tensor.insert %s into %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        scf.yield %ins : tensor<6x4xf32, #fbl.buffer>
      }
      scf.yield %1 : tensor<6x4xf32, #fbl.buffer>
    }
    return %0 : tensor<6x4xf32, #fbl.buffer>
  }
}

// -----

// The same scatter where the target runs more work-items at once than the
// table has columns: every access indexes the rows with the token's id, so
// the rows split into chunks too (here 6 of one row; the grid rounded up to
// whole work-groups). Each work-item copies its chunk's rows of its column,
// then scans every token: it loads the id and, only where the row is in its
// chunk (an id below zero too is not, compared unsigned), the token's
// update and the row, which it adds and stores back.

// CHECK-LABEL: func.func @scatter_add_chunks(
// CHECK:         fbl.dispatch @k0_scatter {{.*}} grid [4, 8, 1] workgroup [4, 4, 1]
// CHECK:           %[[COL:.+]] = fbl.work_item_id 0
// CHECK-NEXT:      %[[CHUNK:.+]] = fbl.work_item_id 1
// CHECK-NEXT:      %[[NCHUNKS:.+]] = arith.constant 6 : index
// CHECK:           scf.if
// CHECK:             %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:        %[[PAST:.+]] = arith.addi %[[CHUNK]], %[[ONE]] : index
// CHECK-NEXT:        %[[NROWS:.+]] = arith.constant 6 : index
// CHECK-NEXT:        %[[NROWS2:.+]] = arith.constant 6 : index
// CHECK-NEXT:        %[[SHORT:.+]] = arith.cmpi ult, %[[PAST]], %[[NROWS2]] : index
// CHECK-NEXT:        %[[END:.+]] = arith.select %[[SHORT]], %[[PAST]], %[[NROWS]] : index
// CHECK:             scf.for
// CHECK:               fbl.load_element
// CHECK-NEXT:          fbl.store_element
// CHECK-NEXT:        }
// CHECK:             scf.for
// CHECK:               %[[ID:.+]] = fbl.load_element
// CHECK-NEXT:          %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT:          %[[FROM:.+]] = arith.subi %[[ROW]], %[[CHUNK]] : index
// CHECK-NEXT:          %[[SIZE:.+]] = arith.subi %[[END]], %[[CHUNK]] : index
// CHECK-NEXT:          %[[MINE:.+]] = arith.cmpi ult, %[[FROM]], %[[SIZE]] : index
// CHECK-NEXT:          scf.if %[[MINE]] {
// CHECK-NOT:             arith.select
// CHECK:                 fbl.load_texel
// CHECK-NOT:             arith.select
// CHECK:                 %[[OLD:.+]] = fbl.load_element %{{.+}}[%{{.+}}] : tensor<6x4xf32, #fbl.buffer>
// CHECK-NEXT:            %[[NEW:.+]] = arith.addf %[[OLD]]
// CHECK-NOT:             scf.if
// CHECK:                 fbl.store_element %[[NEW]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }

#pc = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @scatter_add_chunks(%g: tensor<5x4xf32, #pc>, %ids: tensor<5xi64, #fbl.buffer>, %init: tensor<6x4xf32, #fbl.buffer>) -> tensor<6x4xf32, #fbl.buffer> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %0 = scf.for %i = %c0 to %c5 step %c1 iter_args(%t = %init) -> (tensor<6x4xf32, #fbl.buffer>) {
      %1 = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (tensor<6x4xf32, #fbl.buffer>) {
        %id = tensor.extract %ids[%i] : tensor<5xi64, #fbl.buffer>
        %row = arith.index_cast %id : i64 to index
        %v = tensor.extract %g[%i, %j] : tensor<5x4xf32, #pc>
        %old = tensor.extract %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        %s = arith.addf %old, %v : f32
        %ins = tensor.insert %s into %u[%row, %j] : tensor<6x4xf32, #fbl.buffer>
        scf.yield %ins : tensor<6x4xf32, #fbl.buffer>
      }
      scf.yield %1 : tensor<6x4xf32, #fbl.buffer>
    }
    return %0 : tensor<6x4xf32, #fbl.buffer>
  }
}
