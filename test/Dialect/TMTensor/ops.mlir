// RUN: fbl-opt %s | fbl-opt | FileCheck %s

// torch-mlir's syntax for scaled dot-product attention parses and prints back.
// CHECK-LABEL: func.func @attention
// CHECK: tm_tensor.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x8xf32>) outs(%{{.*}} : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x8xf32>) -> tensor<2x4x8x8xf32> {
  %init = tensor.empty() : tensor<2x4x8x8xf32>
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x8xf32>) outs(%init : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// With a boolean mask of the scores' shape.
// CHECK-LABEL: func.func @masked
// CHECK: tm_tensor.attention ins(%arg0, %arg1, %arg2, %arg3 : tensor<8x16xf32>, tensor<6x16xf32>, tensor<6x8xf32>, tensor<8x6xi1>)
func.func @masked(%q: tensor<8x16xf32>, %k: tensor<6x16xf32>, %v: tensor<6x8xf32>, %m: tensor<8x6xi1>) -> tensor<8x8xf32> {
  %init = tensor.empty() : tensor<8x8xf32>
  %o = tm_tensor.attention ins(%q, %k, %v, %m : tensor<8x16xf32>, tensor<6x16xf32>, tensor<6x8xf32>, tensor<8x6xi1>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}
