// RUN: fbl-opt %s -split-input-file -verify-diagnostics

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1>

func.func @relayout_shape_mismatch(%x: tensor<8x8xf32, #cp>) {
  // expected-error @+1 {{'fbl.relayout' op source 'tensor<8x8xf32, #fbl.channel_packed<packed = 1>>' and result 'tensor<8x4xf32, #fbl.buffer>' must have the same shape and element type}}
  %0 = fbl.relayout %x : tensor<8x8xf32, #cp> to tensor<8x4xf32, #fbl.buffer>
  return
}

// -----

func.func @relayout_without_result_layout(%x: tensor<8x8xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.relayout' op result must carry an fbl layout encoding, got 'tensor<8x8xf32>'}}
  %0 = fbl.relayout %x : tensor<8x8xf32, #fbl.channel_packed<packed = 1>> to tensor<8x8xf32>
  return
}

// -----

func.func @relayout_from_foreign_encoding(%x: tensor<8x8xf32, "plain">) {
  // expected-error @+1 {{'fbl.relayout' op source encoding "plain" is not an fbl layout}}
  %0 = fbl.relayout %x : tensor<8x8xf32, "plain"> to tensor<8x8xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_wrong_size(%x: tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op permutation of size 3 for a rank-2 source and rank-2 result}}
  %0 = fbl.transpose_view %x, [0, 1, 2] : tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>> -> tensor<4x8xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_not_a_permutation(%x: tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op permutation [1, 1] is not a permutation of [0, 2)}}
  %0 = fbl.transpose_view %x, [1, 1] : tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>> -> tensor<4x8xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_wrong_shape(%x: tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op result dim 0 has size 8 but source dim 1 has size 4}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32, #fbl.rtile<tile = [4, 4], packed = 1>> -> tensor<8x4xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_needs_layouts(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'fbl.transpose_view' op source must carry an fbl layout encoding, got 'tensor<8x4xf32>'}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_result_needs_layout(%x: tensor<8x4xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op result must carry an fbl layout encoding, got 'tensor<4x8xf32>'}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32, #fbl.channel_packed<packed = 1>> -> tensor<4x8xf32>
  return
}

// -----

func.func @transpose_view_element_types(%x: tensor<8x4xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op source and result element types differ: 'f32' vs 'f16'}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32, #fbl.channel_packed<packed = 1>> -> tensor<4x8xf16, #fbl.channel_packed<packed = 0>>
  return
}

// -----

func.func @transpose_of_buffer_moves_data(%x: tensor<8x4xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.transpose_view' op a transpose of #fbl.buffer moves data and cannot be a view; use fbl.relayout}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32, #fbl.buffer> -> tensor<4x8xf32, #fbl.buffer>
  return
}

// -----

func.func @transpose_view_wrong_layout(%x: tensor<8x4xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.transpose_view' op result encoding #fbl.channel_packed<packed = 1> is not the composed layout #fbl.rtile<tile = [4, 1], packed = 0, inter = col_major>}}
  %0 = fbl.transpose_view %x, [1, 0] : tensor<8x4xf32, #fbl.channel_packed<packed = 1>> -> tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
  return
}

// -----

func.func @reshape_view_group_count(%x: tensor<8x4xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op reassociation has 2 groups for a rank-1 tensor}}
  %0 = fbl.reshape_view %x [[0], [1]] : tensor<8x4xf32, #fbl.buffer> -> tensor<32xf32, #fbl.buffer>
  return
}

// -----

func.func @reshape_view_not_consecutive(%x: tensor<8x4x2xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op reassociation must group consecutive dims of the larger shape in order}}
  %0 = fbl.reshape_view %x [[0, 2], [1]] : tensor<8x4x2xf32, #fbl.buffer> -> tensor<16x4xf32, #fbl.buffer>
  return
}

// -----

func.func @reshape_view_empty_group(%x: tensor<8x4x2xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op reassociation group 1 is empty}}
  %0 = fbl.reshape_view %x [[0, 1], []] : tensor<8x4x2xf32, #fbl.buffer> -> tensor<32x2xf32, #fbl.buffer>
  return
}

// -----

func.func @reshape_view_sizes(%x: tensor<8x4xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op group 0 multiplies to 32 but the dim it forms has size 16}}
  %0 = fbl.reshape_view %x [[0, 1]] : tensor<8x4xf32, #fbl.buffer> -> tensor<16xf32, #fbl.buffer>
  return
}

// -----

func.func @reshape_view_coverage(%x: tensor<8x4x2xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op reassociation covers 2 of the 3 dims}}
  %0 = fbl.reshape_view %x [[0, 1]] : tensor<8x4x2xf32, #fbl.buffer> -> tensor<32xf32, #fbl.buffer>
  return
}

// -----

// No groups only for unit dims to a scalar.
func.func @reshape_view_scalar_of_many(%x: tensor<1x2xf32, #fbl.buffer>) {
  // expected-error @+1 {{'fbl.reshape_view' op reassociation covers 0 of the 2 dims}}
  %0 = fbl.reshape_view %x [] : tensor<1x2xf32, #fbl.buffer> -> tensor<f32, #fbl.buffer>
  return
}

// -----

// head_dim 2 would cut the RGBA texels of the packed hidden dim in two.
func.func @reshape_splitting_texels(%x: tensor<16x64xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.reshape_view' op reshape of 'tensor<16x64xf32, #fbl.channel_packed<packed = 1>>' to [16, 32, 2] splits a tile or a texel and cannot be a view; use fbl.relayout}}
  %0 = fbl.reshape_view %x [[0], [1, 2]] : tensor<16x64xf32, #fbl.channel_packed<packed = 1>> -> tensor<16x32x2xf32, #fbl.buffer>
  return
}

// -----

func.func @reshape_view_wrong_layout(%x: tensor<16x64xf32, #fbl.channel_packed<packed = 1>>) {
  // expected-error @+1 {{'fbl.reshape_view' op result encoding #fbl.channel_packed<packed = 2> is not the composed layout #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>}}
  %0 = fbl.reshape_view %x [[0], [1, 2]] : tensor<16x64xf32, #fbl.channel_packed<packed = 1>> -> tensor<16x4x16xf32, #fbl.channel_packed<packed = 2>>
  return
}
