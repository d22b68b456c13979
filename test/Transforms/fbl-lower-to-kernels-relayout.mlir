// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// Between packings with both packed dims in whole 4-blocks: a block
// transpose, one work-item per 4x4 block (x along the destination's packed
// dim, y along the source's): 4 whole-texel loads, 4 whole-texel stores.
// A module whose only op is a relayout (and that never loaded the tensor
// dialect): the pass creates the output's tensor.empty itself.
// CHECK-LABEL: func.func @relayout_between_layouts
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
// CHECK: fbl.dispatch @k0_relayout ins(%{{.*}}) outs(%[[E]] : {{.*}}) grid [2, 2, 1] workgroup [2, 2, 1] attributes {fbl.estimate = {fetches = 16 : i64, {{.*}}, writes = 16 : i64}}
// CHECK-COUNT-4: fbl.load_texel
// CHECK-NOT:     fbl.load_texel
// CHECK-COUNT-4: fbl.store_texel
// CHECK-NOT:     fbl.store_texel
// CHECK:         return
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @relayout_between_layouts(%x: tensor<8x8xf32, #fbl.channel_packed<packed = 1>>) -> tensor<8x8xf32, #fbl.channel_packed<packed = 0>> {
    %r = fbl.relayout %x : tensor<8x8xf32, #fbl.channel_packed<packed = 1>> to tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
    return %r : tensor<8x8xf32, #fbl.channel_packed<packed = 0>>
  }
}

// -----

// Batched: the batch dims come from the third work-item id; a 2x8x4 tensor
// has 2 x (8/4) x (4/4) blocks.
// CHECK-LABEL: func.func @batched_block_transpose
// CHECK: fbl.dispatch @k0_relayout {{.*}} grid [1, 2, 2] workgroup [1, 2, 1] attributes {fbl.estimate = {fetches = 16 : i64, {{.*}}, writes = 16 : i64}}
// CHECK: %[[Z:.+]] = fbl.work_item_id 2
// CHECK: arith.remui %[[Z]]
// CHECK-COUNT-4: fbl.load_texel
// CHECK-COUNT-4: fbl.store_texel
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @batched_block_transpose(%x: tensor<2x8x4xf32, #fbl.channel_packed<packed = 1>>) -> tensor<2x8x4xf32, #fbl.channel_packed<packed = 2>> {
    %r = fbl.relayout %x : tensor<2x8x4xf32, #fbl.channel_packed<packed = 1>> to tensor<2x8x4xf32, #fbl.channel_packed<packed = 2>>
    return %r : tensor<2x8x4xf32, #fbl.channel_packed<packed = 2>>
  }
}

// -----

// The same packed dim (channel-packed to a column-major R-Tile): the
// per-texel copy fetches one whole texel per output texel (channel c of the
// output is channel c of the source's texel).
// CHECK-LABEL: func.func @same_packing
// CHECK: fbl.dispatch @k0_relayout {{.*}} grid [2, 16, 1] workgroup [2, 8, 1] attributes {fbl.estimate = {fetches = 32 : i64, {{.*}}, writes = 32 : i64}}
// CHECK:      %[[T:.+]] = fbl.load_texel
// CHECK-NOT:  fbl.load_texel
// CHECK:      %[[C0:.+]] = vector.extract %[[T]][0]
// CHECK-NEXT: %[[C1:.+]] = vector.extract %[[T]][1]
// CHECK-NEXT: %[[C2:.+]] = vector.extract %[[T]][2]
// CHECK-NEXT: %[[C3:.+]] = vector.extract %[[T]][3]
// CHECK:      vector.from_elements %[[C0]], %[[C1]], %[[C2]], %[[C3]]
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @same_packing(%x: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>) -> tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, inter = col_major>> {
    %r = fbl.relayout %x : tensor<8x16xf32, #fbl.channel_packed<packed = 1>> to tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, inter = col_major>>
    return %r : tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, inter = col_major>>
  }
}

// -----

// Between packings where the destination's packed dim (6) ends inside a
// texel: no block cover, the per-texel copy fetches one source texel per
// element; channels past the end (2 of each texel's 4 in the second column
// of texels) neither load nor compute.
// CHECK-LABEL: func.func @partial_blocks
// CHECK: fbl.dispatch @k0_relayout {{.*}} grid [2, 8, 1] workgroup [2, 8, 1] attributes {fbl.estimate = {fetches = 48 : i64, {{.*}}, writes = 16 : i64}}
// CHECK:      fbl.load_texel
// CHECK-NOT:  scf.for
// CHECK-COUNT-3: scf.if %{{.+}} -> (vector<4xf32>, index) {
// CHECK-COUNT-3: scf.if %{{.+}} -> (f32) {
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @partial_blocks(%x: tensor<8x6xf32, #fbl.channel_packed<packed = 0>>) -> tensor<8x6xf32, #fbl.channel_packed<packed = 1>> {
    %r = fbl.relayout %x : tensor<8x6xf32, #fbl.channel_packed<packed = 0>> to tensor<8x6xf32, #fbl.channel_packed<packed = 1>>
    return %r : tensor<8x6xf32, #fbl.channel_packed<packed = 1>>
  }
}
