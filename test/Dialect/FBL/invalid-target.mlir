// RUN: fbl-opt %s -split-input-file -verify-diagnostics

// An encoded tensor whose image exceeds the target's limits is rejected where
// it is defined, with the target as a note.

// expected-note @+1 {{target set here}}
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  // expected-error @+1 {{'func.func' op block argument #0 of type 'tensor<20000x64xf32, #fbl.channel_packed<packed = 1>>' needs an image of 16x20000 texels: image height 20000 exceeds the device limit 16384 of target 'adreno-a740'}}
  func.func @too_tall(%x: tensor<20000x64xf32, #fbl.channel_packed<packed = 1>>) {
    return
  }
}

// -----

// Folding the batch into y is too tall for the Adreno; into layers it fits.
// expected-note @+1 {{target set here}}
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @fits_in_layers(%x: tensor<32x1024x64xf32, #fbl.channel_packed<packed = 2, batch = layers>>) {
    return
  }
  // expected-error @+1 {{'func.func' op block argument #0 of type 'tensor<32x1024x64xf32, #fbl.channel_packed<packed = 2>>' needs an image of 16x32768 texels: image height 32768 exceeds the device limit 16384 of target 'adreno-a740'}}
  func.func @too_tall_in_y(%x: tensor<32x1024x64xf32, #fbl.channel_packed<packed = 2>>) {
    return
  }
}

// -----

// expected-note @+1 {{target set here}}
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @too_many_layers() {
    // expected-error @+1 {{'tensor.empty' op result #0 of type 'tensor<4096x4x4xf32, #fbl.channel_packed<packed = 2, batch = layers>>' needs an image of 1x4 texels x 4096 layers: image array size 4096 exceeds the device limit 2048 of target 'pocl-cpu'}}
    %0 = tensor.empty() : tensor<4096x4x4xf32, #fbl.channel_packed<packed = 2, batch = layers>>
    return
  }
}

// -----

// expected-note @+1 {{target set here}}
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_buffer_bytes = 1024>} {
  // expected-error @+1 {{'func.func' op block argument #0 of type 'tensor<512xf32, #fbl.buffer>' needs a buffer of 2048 bytes: buffer size 2048 exceeds the device limit 1024 of target 'pocl-cpu'}}
  func.func @buffer_too_large(%x: tensor<512xf32, #fbl.buffer>) {
    return
  }
}

// -----

// expected-error @+1 {{'fbl.target' must be a #fbl.target attribute}}
module attributes {fbl.target = "adreno"} {}

// -----

module {
  // expected-error @+1 {{'fbl.target' must be attached to a module}}
  func.func @f() attributes {fbl.target = #fbl.target<"pocl-cpu">} {
    return
  }
}

// -----

// expected-error @+1 {{unknown fbl attribute 'fbl.bogus'}}
module attributes {fbl.bogus = 1} {}

// -----

// expected-error @+1 {{'fbl.param' belongs on function arguments, not on ops}}
func.func @f() attributes {fbl.param} {
  return
}

// -----

// expected-error @+1 {{'fbl.param' is a unit attribute}}
func.func @f(%w: tensor<4xf32> {fbl.param = 1}) {
  return
}

// -----

// expected-error @+1 {{trainable parameter #0 must be a ranked tensor, got 'f32'}}
func.func @f(%w: f32 {fbl.param}) {
  return
}

// -----

// expected-error @+1 {{unknown fbl argument attribute 'fbl.bogus'}}
func.func @f(%w: tensor<4xf32> {fbl.bogus}) {
  return
}

// -----

// expected-error @+1 {{'fbl.name' is a non-empty string}}
func.func @f(%w: tensor<4xf32> {fbl.name = ""}) {
  return
}

// -----

// expected-error @+1 {{'fbl.init' of argument #0: initializer 'normal:-0.02' is none of zeros, ones, normal:<std>, uniform:<bound> (with a finite positive number)}}
func.func @f(%w: tensor<4xf32> {fbl.init = "normal:-0.02"}) {
  return
}

// -----

// expected-error @+1 {{'fbl.init' of argument #0: initializer 'kaiming' is none of zeros, ones, normal:<std>, uniform:<bound> (with a finite positive number)}}
func.func @f(%w: tensor<4xf32> {fbl.init = "kaiming"}) {
  return
}

// -----

// expected-error @+1 {{'fbl.phase' must be "forward", "backward" or "optimizer"}}
%0 = arith.constant {fbl.phase = "sideways"} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.class' must be an integer class from 1 to 4}}
%0 = arith.constant {fbl.class = 5} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.reuse' must list dictionaries naming an operand}}
%0 = arith.constant {fbl.reuse = [{operand = 0}]} 0.0 : f32

// -----

// expected-error @+1 {{'fbl.updates' names, per function result, the argument it replaces or -1}}
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {fbl.updates = array<i64: 3>} {
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{'fbl.step_count' is a unit attribute}}
func.func @f(%x: tensor<f32> {fbl.step_count = 2}) {
  return
}

// -----

// expected-error @+1 {{'fbl.name' is a non-empty string}}
func.func @f(%x: tensor<4xf32> {fbl.name = 3}) {
  return
}

// -----

// expected-error @+1 {{'fbl.name' is a non-empty string}}
func.func @f(%x: tensor<4xf32> {fbl.name = ""}) {
  return
}

// -----

// expected-error @+1 {{'fbl.name' cannot be '__metadata__' (safetensors reserves it)}}
func.func @f(%x: tensor<4xf32> {fbl.name = "__metadata__"}) {
  return
}

// -----

// expected-error @+1 {{arguments #0 and #2 are both named 'model.norm.weight'}}
func.func @f(%a: tensor<4xf32> {fbl.name = "model.norm.weight"},
             %b: tensor<4xf32> {fbl.name = "model.norm.bias"},
             %c: tensor<4xf32> {fbl.param, fbl.name = "model.norm.weight"}) {
  return
}

// -----

// expected-error @+1 {{'fbl.init' of argument #0: initializer 'normal:-1' is none of zeros, ones, normal:<std>, uniform:<bound> (with a finite positive number)}}
func.func @f(%w: tensor<4xf32> {fbl.param, fbl.init = "normal:-1"}) {
  return
}

// -----

// expected-error @+1 {{'fbl.init' is a string}}
func.func @f(%w: tensor<4xf32> {fbl.param, fbl.init = 0.02}) {
  return
}

// -----

// expected-error @+1 {{'fbl.init' initializes float tensor arguments of functions only}}
func.func @f(%ids: tensor<4xi64> {fbl.init = "zeros"}) {
  return
}

// -----

// expected-error @+1 {{'fbl.name' is a non-empty string}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {fbl.name = ""}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown fbl result attribute 'fbl.param'}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {fbl.param}) {
  return %x : tensor<4xf32>
}
