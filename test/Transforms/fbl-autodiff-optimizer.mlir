// RUN: fbl-opt %s -fbl-autodiff="optimizer=sgd lr=0.05" -mlir-print-local-scope | FileCheck %s --check-prefix=SGD
// RUN: fbl-opt %s -fbl-autodiff="optimizer=adamw wrt=0" -mlir-print-local-scope | FileCheck %s --check-prefix=ADAMW

// With SGD, @f_step takes the forward's arguments and returns the loss and the
// updated parameters, p - lr * (g + wd * p), elementwise.
// SGD-LABEL: func.func @model_step(%arg0: tensor<3xf32> {fbl.param}, %arg1: tensor<2xf32> {fbl.param}, %arg2: tensor<3xf32>)
// SGD-SAME: -> (tensor<f32>, tensor<3xf32>, tensor<2xf32>) attributes {fbl.updates = array<i64: -1, 0, 1>}
// SGD-DAG: %[[LR:.*]] = arith.constant 5.000000e-02 : f32
// SGD: %[[P0:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0, %{{.*}}, %[[LR]], %{{.*}} : tensor<3xf32>, tensor<3xf32>, f32, f32)
// SGD: ^bb0(%[[P:.*]]: f32, %[[G:.*]]: f32, %[[L:.*]]: f32, %[[WD:.*]]: f32, %{{.*}}: f32):
// SGD:   %[[DECAY:.*]] = arith.mulf %[[WD]], %[[P]] : f32
// SGD:   %[[DIR:.*]] = arith.addf %[[G]], %[[DECAY]] : f32
// SGD:   %[[STEP:.*]] = arith.mulf %[[L]], %[[DIR]] : f32
// SGD:   arith.subf %[[P]], %[[STEP]] : f32
// SGD: %[[P1:.*]] = linalg.generic
// SGD: return %{{.*}}, %[[P0]], %[[P1]] : tensor<f32>, tensor<3xf32>, tensor<2xf32>

// AdamW: the moments of each differentiated parameter and the step count
// come in after the forward's arguments and go out after the parameters.
// Results name the arguments they replace in the next step.
// The moments start at zero (fbl.init), as AdamW defines them.
// ADAMW-LABEL: func.func @model_step(%arg0: tensor<3xf32> {fbl.param}, %arg1: tensor<2xf32> {fbl.param}, %arg2: tensor<3xf32>, %arg3: tensor<3xf32> {fbl.init = "zeros"}, %arg4: tensor<3xf32> {fbl.init = "zeros"}, %arg5: tensor<f32> {fbl.step_count})
// ADAMW-SAME: -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) attributes {fbl.updates = array<i64: -1, 0, 3, 4>}
// ADAMW: %[[T:.*]] = tensor.extract %arg5[] : tensor<f32>
// ADAMW: math.powf %{{.*}}, %[[T]] : f32
// ADAMW: %[[M:.*]] = linalg.generic {{.*}} ins(%arg3, %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>, f32)
// ADAMW: %[[V:.*]] = linalg.generic {{.*}} ins(%arg4, %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>, f32)
// ADAMW: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %[[M]], %[[V]], {{.*}})
// ADAMW:   math.sqrt
// ADAMW: return %{{.*}}, %[[P]], %[[M]], %[[V]]

func.func @model(%w: tensor<3xf32> {fbl.param}, %b: tensor<2xf32> {fbl.param}, %x: tensor<3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%w, %x, %b : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %q = arith.mulf %p, %d : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// A model that names its arguments: the names and initializers stay on every
// argument of _grad and _step; gradients and moments are named after their
// parameter, the loss and the step count by convention, and each update like
// the argument it replaces. The forward's result attributes stay on the loss.
// SGD-LABEL: func.func @named_grad(%arg0: tensor<3xf32> {fbl.name = "model.w", fbl.param}, %arg1: tensor<2xf32> {fbl.init = "normal:0.02", fbl.name = "model.lora_A", fbl.param}, %arg2: tensor<3xf32> {fbl.name = "inputs"})
// SGD-SAME: -> (tensor<f32> {fbl.name = "nll"}, tensor<3xf32> {fbl.name = "model.w.grad"}, tensor<2xf32> {fbl.name = "model.lora_A.grad"})
// SGD-LABEL: func.func @named_step(%arg0: tensor<3xf32> {fbl.name = "model.w", fbl.param}, %arg1: tensor<2xf32> {fbl.init = "normal:0.02", fbl.name = "model.lora_A", fbl.param}, %arg2: tensor<3xf32> {fbl.name = "inputs"})
// SGD-SAME: -> (tensor<f32> {fbl.name = "nll"}, tensor<3xf32> {fbl.name = "model.w"}, tensor<2xf32> {fbl.name = "model.lora_A"})
// ADAMW-LABEL: func.func @named_step(%arg0: tensor<3xf32> {fbl.name = "model.w", fbl.param}, %arg1: tensor<2xf32> {fbl.init = "normal:0.02", fbl.name = "model.lora_A", fbl.param}, %arg2: tensor<3xf32> {fbl.name = "inputs"}, %arg3: tensor<3xf32> {fbl.init = "zeros", fbl.name = "model.w.exp_avg"}, %arg4: tensor<3xf32> {fbl.init = "zeros", fbl.name = "model.w.exp_avg_sq"}, %arg5: tensor<f32> {fbl.name = "step", fbl.step_count})
// ADAMW-SAME: -> (tensor<f32> {fbl.name = "nll"}, tensor<3xf32> {fbl.name = "model.w"}, tensor<3xf32> {fbl.name = "model.w.exp_avg"}, tensor<3xf32> {fbl.name = "model.w.exp_avg_sq"})

func.func @named(%w: tensor<3xf32> {fbl.param, fbl.name = "model.w"},
                 %a: tensor<2xf32> {fbl.param, fbl.name = "model.lora_A", fbl.init = "normal:0.02"},
                 %x: tensor<3xf32> {fbl.name = "inputs"}) -> (tensor<f32> {fbl.name = "nll"}) {
  %zero = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%w, %x, %a : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%p0: f32, %c: f32, %d: f32, %acc: f32):
    %p = arith.mulf %p0, %c : f32
    %q = arith.mulf %p, %d : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
