#include "estimator/system_profile.h"

namespace paraplan {

double Accelerator::PeakTflops(Precision p) const {
  switch (p) {
    case Precision::kBf16:
      return peak_tflops_bf16 > 0 ? peak_tflops_bf16 : peak_tflops_fp16;
    case Precision::kFp16:
      return peak_tflops_fp16 > 0 ? peak_tflops_fp16 : peak_tflops_bf16;
    case Precision::kFp8:
      if (peak_tflops_fp8 > 0) return peak_tflops_fp8;
      return peak_tflops_bf16 > 0 ? peak_tflops_bf16 : peak_tflops_fp16;
    case Precision::kFp32:
      return peak_tflops_fp32;
  }
  return 0;
}

}  // namespace paraplan
