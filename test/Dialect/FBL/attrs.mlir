// RUN: fbl-opt %s -split-input-file | fbl-opt -split-input-file | FileCheck %s

// Every layout encoding and the target survive a print/parse round trip.

// CHECK-LABEL: func.func @buffer_layout
// CHECK-SAME: tensor<3x5xi32, #fbl.buffer>
func.func @buffer_layout(%arg0: tensor<3x5xi32, #fbl.buffer>) {
  return
}

// -----

// CHECK-LABEL: func.func @channel_packed_layouts
// CHECK-SAME: tensor<64x30xf32, #fbl.channel_packed<packed = 1>>
// CHECK-SAME: tensor<64x30xf16, #fbl.channel_packed<packed = 0>>
// CHECK-SAME: tensor<8x64x32xf32, #fbl.channel_packed<packed = 2, batch = layers>>
// CHECK-SAME: tensor<7xf32, #fbl.channel_packed<packed = 0>>
// CHECK-SAME: tensor<f32, #fbl.channel_packed<packed = 0>>
func.func @channel_packed_layouts(
    %a: tensor<64x30xf32, #fbl.channel_packed<packed = 1>>,
    %b: tensor<64x30xf16, #fbl.channel_packed<packed = 0, batch = y>>,
    %c: tensor<8x64x32xf32, #fbl.channel_packed<packed = 2, batch = layers>>,
    %d: tensor<7xf32, #fbl.channel_packed<packed = 0>>,
    %e: tensor<f32, #fbl.channel_packed<packed = 0>>) {
  return
}

// -----

// Default-valued parameters are elided when printed.
// CHECK-LABEL: func.func @rtile_layouts
// CHECK-SAME: tensor<64x64xf32, #fbl.rtile<tile = [4, 4], packed = 1>>
// CHECK-SAME: tensor<64x64xf32, #fbl.rtile<tile = [8, 4], packed = 0, intra = rows_on_x, inter = col_major>>
// CHECK-SAME: tensor<64x64xf32, #fbl.rtile<tile = [4, 8], packed = 1, intra = linear>>
// CHECK-SAME: tensor<4x50x66xf32, #fbl.rtile<tile = [4, 4], packed = 2, batch = layers>>
func.func @rtile_layouts(
    %a: tensor<64x64xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_y, inter = row_major, batch = y>>,
    %b: tensor<64x64xf32, #fbl.rtile<tile = [8, 4], packed = 0, intra = rows_on_x, inter = col_major>>,
    %c: tensor<64x64xf32, #fbl.rtile<tile = [4, 8], packed = 1, intra = linear>>,
    %d: tensor<4x50x66xf32, #fbl.rtile<tile = [4, 4], packed = 2, batch = layers>>) {
  return
}

// -----

// CHECK-LABEL: func.func @image_layout
// CHECK-SAME: #fbl.image<tile = [1, 4, 4], packed = 2, x = [d1, d2, d1.e], y = [d0], layers = []>
// CHECK-SAME: #fbl.image<tile = [4], packed = 0, x = [], y = [d0], layers = []>
func.func @image_layout(
    %a: tensor<8x16x64xf32, #fbl.image<tile = [1, 4, 4], packed = 2, x = [d1, d2, d1.e], y = [d0], layers = []>>,
    %b: tensor<10xf32, #fbl.image<tile = [4], packed = 0, x = [], y = [d0], layers = []>>) {
  return
}

// -----

// A preset prints as its name alone; a custom target prints every field.
// CHECK: module attributes {fbl.target = #fbl.target<"pocl-cpu">}
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
}

// -----

// CHECK: #fbl.target<"my-gpu", max_image_width = 4096, max_image_height = 2048, max_image_layers = 256, max_buffer_bytes = 268435456, cache_line_texels = [4, 2], cache_bytes = 8192, cache_ways = 2, fp16 = false, max_workgroup_size = 256, preferred_workgroup = [16, 16]>
module attributes {fbl.target = #fbl.target<"my-gpu", max_image_width = 4096, max_image_height = 2048, max_image_layers = 256, max_buffer_bytes = 268435456, cache_line_texels = [4, 2], cache_bytes = 8192, cache_ways = 2, fp16 = false, max_workgroup_size = 256, preferred_workgroup = [16, 16]>} {
}

// -----

// Fields override a preset.
// CHECK: #fbl.target<"adreno-a740", max_image_width = 8192, max_image_height = 16384
module attributes {fbl.target = #fbl.target<"adreno-a740", max_image_width = 8192>} {
}

// -----

// local_tiled_gemm prints when it differs from the preset's (or, for a
// custom target, from false), so the printed form parses back the same.
// CHECK: #fbl.target<"nvidia-h200", {{.*}}preferred_workgroup = [16, 16], local_tiled_gemm = false>
module attributes {fbl.target = #fbl.target<"nvidia-h200", local_tiled_gemm = false>} {
}

// -----

// CHECK: #fbl.target<"adreno-a740", {{.*}}preferred_workgroup = [16, 8], local_tiled_gemm = true
module attributes {fbl.target = #fbl.target<"adreno-a740", local_tiled_gemm = true>} {
}

// -----

// Kernel argument limits print where they differ from the preset's (or,
// for a custom target, from OpenCL 1.2's 128, 8 and 1024).
// CHECK: #fbl.target<"nvidia-h200", {{.*}}preferred_workgroup = [16, 16], max_write_image_args = 16>
module attributes {fbl.target = #fbl.target<"nvidia-h200", max_write_image_args = 16>} {
}

// -----

// CHECK: #fbl.target<"my-gpu", {{.*}}preferred_workgroup = [8, 8], max_read_image_args = 256, max_parameter_bytes = 4352>
module attributes {fbl.target = #fbl.target<"my-gpu", max_image_width = 4096, max_image_height = 2048, max_image_layers = 256, max_buffer_bytes = 268435456, cache_line_texels = [4, 2], cache_bytes = 8192, cache_ways = 2, fp16 = false, max_workgroup_size = 256, preferred_workgroup = [8, 8], max_read_image_args = 256, max_write_image_args = 8, max_parameter_bytes = 4352>} {
}

// -----

// gemm_tile prints when it differs from the preset's (or the default
// [8, 2, 16]), and parses back the same.
// CHECK: #fbl.target<"pocl-cpu", {{.*}}preferred_workgroup = [8, 8], gemm_tile = [16, 1, 16]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [16, 1, 16]>} {
}

// -----

// CHECK: module attributes {fbl.target = #fbl.target<"pocl-cpu">}
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16]>} {
}

// -----

// A group that is not square: group_rows work-items along m follow; a
// fourth number equal to the first is the square group's three.
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile = [8, 2, 16, 16], gemm_tile_classes = {{\[\[}}1048576, 16, 1, 16, 8]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16, 16], gemm_tile_classes = [[1048576, 16, 1, 16, 8]]>} {
}

// -----

// CHECK: module attributes {fbl.target = #fbl.target<"pocl-cpu">}
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16, 8]>} {
}

// -----

// A fifth number 0 stages whole blocks in runs (1, XOR-permuted rows, is
// the default and prints as nothing).
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile = [8, 2, 16, 8, 0], gemm_tile_classes = {{\[\[}}1048576, 8, 2, 16, 16, 0], [4194304, 8, 2, 16]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16, 8, 0], gemm_tile_classes = [[1048576, 8, 2, 16, 16, 0], [4194304, 8, 2, 16, 8, 1]]>} {
}

// -----

// CHECK: module attributes {fbl.target = #fbl.target<"pocl-cpu">}
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16, 8, 1]>} {
}

// -----

// A sixth number stores the next slice after that many of the slice's k
// steps (0, after all of them, is the default and prints as nothing).
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile = [8, 2, 16, 8, 1, 8], gemm_tile_classes = {{\[\[}}1048576, 8, 2, 16, 16, 0, 4], [4194304, 8, 2, 16]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 16, 8, 1, 8], gemm_tile_classes = [[1048576, 8, 2, 16, 16, 0, 4], [4194304, 8, 2, 16, 8, 1, 0]]>} {
}

// -----

// gemm_tile_classes: larger GEMMs' tiles, printed when they differ from the
// preset's, and parsed back the same.
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile = [8, 1, 16], gemm_tile_classes = {{\[\[}}1048576, 8, 2, 16], [4194304, 16, 2, 8]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 1, 16], gemm_tile_classes = [[1048576, 8, 2, 16], [4194304, 16, 2, 8]]>} {
}

// -----

// A ninth number, own_launch, follows a whole tile: printed with every
// number of its tile, and 0 as nothing.
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile_classes = {{\[\[}}1048576, 8, 2, 16], [4194304, 16, 2, 16, 16, 1, 0, 2, 1]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile_classes = [[1048576, 8, 2, 16, 8, 1, 0, 2, 0], [4194304, 16, 2, 16, 16, 1, 0, 2, 1]]>} {
}

// -----

// A seventh number of a tile, item_blocks_n: blocks a work-item computes
// along n (item_blocks then along m); printed where it differs.
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_tile = [8, 2, 8, 8, 1, 0, 4], gemm_tile_classes = {{\[\[}}4096, 8, 2, 8]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_tile = [8, 2, 8, 8, 1, 0, 4], gemm_tile_classes = [[4096, 8, 2, 8, 8, 1, 0, 2]]>} {
}

// -----

// half_storage likewise: the mobile presets set it, the others do not.
// CHECK: #fbl.target<"adreno-a740", {{.*}}preferred_workgroup = [16, 8], half_storage = false>
module attributes {fbl.target = #fbl.target<"adreno-a740", half_storage = false>} {
}

// -----

// CHECK: #fbl.target<"nvidia-h200", {{.*}}preferred_workgroup = [16, 16], half_storage = true>
module attributes {fbl.target = #fbl.target<"nvidia-h200", half_storage = true>} {
}

// -----

// Execution-model fields print where they differ from the preset's (or, for
// a custom target, from the generic default), after every other field.
// CHECK: #fbl.target<"mali-g710", {{.*}}preferred_workgroup = [8, 8], wave_size = 32, miss_ps = 9000>
module attributes {fbl.target = #fbl.target<"mali-g710", miss_ps = 9000, wave_size = 32>} {
}

// -----

// CHECK: #fbl.target<"my-gpu", {{.*}}preferred_workgroup = [16, 16], compute_units = 4>
module attributes {fbl.target = #fbl.target<"my-gpu", max_image_width = 4096, max_image_height = 2048, max_image_layers = 256, max_buffer_bytes = 0, cache_line_texels = [4, 2], cache_bytes = 8192, cache_ways = 2, fp16 = false, max_workgroup_size = 256, preferred_workgroup = [16, 16], compute_units = 4, wave_size = 32>} {
}

// -----

// CHECK-LABEL: func.func @trainable
// CHECK-SAME: {fbl.param}
func.func @trainable(%w: tensor<4x4xf32> {fbl.param}, %x: tensor<4x4xf32>) {
  return
}

// -----

// Hugging Face tensor names and initializers of the model conventions.
// CHECK-LABEL: func.func @named_and_initialized
// CHECK-SAME: {fbl.init = "normal:0.02", fbl.name = "model.embed_tokens.weight", fbl.param}
// CHECK-SAME: {fbl.init = "zeros", fbl.name = "lm_head.lora_B.weight", fbl.param}
// CHECK-SAME: {fbl.init = "uniform:0.0625", fbl.name = "lm_head.lora_A.weight", fbl.param}
// CHECK-SAME: {fbl.init = "ones", fbl.name = "model.norm.weight"}
// CHECK-SAME: {fbl.name = "input_ids"}
func.func @named_and_initialized(
    %e: tensor<8x4xf32> {fbl.name = "model.embed_tokens.weight", fbl.init = "normal:0.02", fbl.param},
    %b: tensor<8x2xf32> {fbl.name = "lm_head.lora_B.weight", fbl.init = "zeros", fbl.param},
    %a: tensor<2x4xf32> {fbl.name = "lm_head.lora_A.weight", fbl.init = "uniform:0.0625", fbl.param},
    %n: tensor<4xf32> {fbl.name = "model.norm.weight", fbl.init = "ones"},
    %ids: tensor<4xi64> {fbl.name = "input_ids"}) {
  return
}

// -----

// Names and initializers of arguments, names of results.
// CHECK-LABEL: func.func @named
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {fbl.init = "normal:0.02", fbl.name = "model.layers.0.mlp.up_proj.lora_A.weight", fbl.param}
// CHECK-SAME: %{{.*}}: tensor<4xi64> {fbl.name = "input_ids"}
// CHECK-SAME: -> (tensor<f32> {fbl.name = "loss"})
func.func @named(%w: tensor<4x4xf32> {fbl.param, fbl.name = "model.layers.0.mlp.up_proj.lora_A.weight", fbl.init = "normal:0.02"},
                 %ids: tensor<4xi64> {fbl.name = "input_ids"}) -> (tensor<f32> {fbl.name = "loss"}) {
  %e = tensor.empty() : tensor<f32>
  return %e : tensor<f32>
}

// -----

// gemm_variants: other GEMM bodies the device measures, printed where they
// differ from the preset's (the NVIDIA preset has [[8, 0], [0, 1], [12, 0]]).
// CHECK: #fbl.target<"pocl-cpu", {{.*}}gemm_variants = {{\[\[}}8, 0], [0, 1], [4, 1]]{{.*}}>
module attributes {fbl.target = #fbl.target<"pocl-cpu", gemm_variants = [[8, 0], [0, 1], [4, 1]]>} {
}

// -----

// CHECK: module attributes {fbl.target = #fbl.target<"nvidia-h200">}
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_variants = [[8, 0], [0, 1], [12, 0]]>} {
}

// -----

// No variants on a preset that has them.
// CHECK: #fbl.target<"nvidia-h200", {{.*}}gemm_variants = []{{.*}}>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_variants = []>} {
}
