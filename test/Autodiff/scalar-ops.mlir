// Every scalar rule in one elementwise body, then a sum.
// GRADCHECK-ARG: 0 uniform 0.5 1.5
// GRADCHECK-ARG: 1 uniform -1.0 1.0
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

func.func @scalar_ops(%x: tensor<7xf32> {fbl.param}, %y: tensor<7xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x, %y : tensor<7xf32>, tensor<7xf32>) outs(%e : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %add = arith.addf %a, %b : f32
    %sub = arith.subf %a, %b : f32
    %mul = arith.mulf %add, %sub : f32
    %div = arith.divf %mul, %a : f32
    %neg = arith.negf %div : f32
    %exp = math.exp %neg : f32
    %log = math.log %a : f32
    %tanh = math.tanh %b : f32
    %sqrt = math.sqrt %a : f32
    %rsqrt = math.rsqrt %a : f32
    %pow = math.powf %a, %three : f32
    %max = arith.maximumf %b, %log : f32
    %min = arith.minimumf %b, %tanh : f32
    %cmp = arith.cmpf ogt, %a, %one : f32
    %sel = arith.select %cmp, %sqrt, %rsqrt : f32
    %erf = math.erf %b : f32
    // sigmoid(b) = 1 / (1 + exp(-b))
    %nb = arith.negf %b : f32
    %enb = math.exp %nb : f32
    %den = arith.addf %one, %enb : f32
    %sig = arith.divf %one, %den : f32
    %t1 = arith.addf %exp, %max : f32
    %t2 = arith.addf %t1, %min : f32
    %t3 = arith.addf %t2, %sel : f32
    %t4 = arith.addf %t3, %pow : f32
    %t5 = arith.addf %t4, %erf : f32
    %t6 = arith.mulf %t5, %sig : f32
    linalg.yield %t6 : f32
  } -> tensor<7xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%r : tensor<7xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
