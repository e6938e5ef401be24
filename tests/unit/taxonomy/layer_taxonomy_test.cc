// Tests of analysis/taxonomy: every example of docs/metrics.md's "Kernel type and layer type"
// tables, real kernel names from shared/traces (embedded here as test vectors; the traces
// themselves stay out of the repository), operator names and the memoizing classifier.
// kernel_type_test.cc covers kernel type; taxonomy_traces_test.cc runs over whole traces.
#include "analysis/taxonomy/layer_taxonomy.h"

#include <pthread.h>

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

struct Example {
  const char* name;
  LayerType type;
};

TEST(LayerTypeNameTest, NamesAndParseRoundTrip) {
  const std::vector<std::pair<LayerType, std::string_view>> expected = {
      {LayerType::kCommunication, "communication"},
      {LayerType::kMemcpy, "memcpy"},
      {LayerType::kAttention, "attention"},
      {LayerType::kConv, "conv"},
      {LayerType::kMatmul, "matmul"},
      {LayerType::kNorm, "norm"},
      {LayerType::kSoftmax, "softmax"},
      {LayerType::kEmbedding, "embedding"},
      {LayerType::kElementwise, "elementwise"},
      {LayerType::kOther, "other"},
  };
  ASSERT_EQ(expected.size(), static_cast<size_t>(kNumLayerTypes));
  for (const auto& [type, name] : expected) {
    EXPECT_EQ(LayerTypeName(type), name);
    EXPECT_EQ(ParseLayerType(name), type) << name;
  }
  EXPECT_EQ(ParseLayerType("MatMul"), LayerType::kMatmul);
  EXPECT_EQ(ParseLayerType("gemm"), std::nullopt);
  EXPECT_EQ(ParseLayerType(""), std::nullopt);
  EXPECT_EQ(ParseLayerType("matmul "), std::nullopt);
  EXPECT_EQ(LayerTypeName(static_cast<LayerType>(200)), "other");
}

// The "examples" column of docs/metrics.md's kernel-name table, positive and negative; the
// serving families' examples are tested in serving_kernels_test.cc, one test per family.
TEST(ClassifyKernelNameTest, MetricsTableExamples) {
  const Example examples[] = {
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", LayerType::kCommunication},
      // Row 1's lookahead: a fused Triton kernel named after all_reduce is not one.
      {"triton_poi_fused_add_all_reduce_2", LayerType::kElementwise},
      {"Memcpy DtoD (Device -> Device)", LayerType::kMemcpy},
      {"reshape_and_cache_flash_kernel", LayerType::kMemcpy},
      {"flash::FlashAttnFwdSm90<...>", LayerType::kAttention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_...", LayerType::kAttention},
      {"paged_attention_v2_kernel", LayerType::kAttention},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_..._cudnn", LayerType::kConv},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_..._cublas", LayerType::kMatmul},
      {"nvjet_tst_128x128_64x4_1x2_h_bz_coopA", LayerType::kMatmul},
      {"Cijk_Alik_Bljk_BBS_BH_..._MT64x32x256_...", LayerType::kMatmul},
      {"triton_poi_fused_moe_forward_0", LayerType::kElementwise},
      {"vectorized_layer_norm_kernel", LayerType::kNorm},
      {"triton_red_fused__to_copy_add_copy__mean_mul_pow_rsqrt_3", LayerType::kNorm},
      {"cunn_SoftMaxForward", LayerType::kSoftmax},
      {"indexSelectLargeIndex", LayerType::kEmbedding},
      {"vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>", LayerType::kElementwise},
      {"triton_poi_fused_mul_silu_slice_0", LayerType::kElementwise},
      {"DeviceSegmentedRadixSortKernel", LayerType::kOther},
      {"topkGating", LayerType::kOther},
  };
  for (const Example& e : examples) {
    EXPECT_EQ(LayerTypeName(ClassifyKernelName(e.name)), LayerTypeName(e.type)) << e.name;
  }
}

// docs/metrics.md row 1 relies on a negative lookahead, which RE2 lacks: the library checks
// the `^(?!triton_)` prefix itself. The table's semantics (a case-insensitive lookahead
// anchored at the start of the name) must hold exactly.
TEST(ClassifyKernelNameTest, RowOneLookaheadSemantics) {
  EXPECT_EQ(ClassifyKernelName("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
            LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("NCCL_x"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("custom_AllReduce"), LayerType::kCommunication);
  EXPECT_NE(ClassifyKernelName("triton_poi_fused_add_all_reduce_2"), LayerType::kCommunication);
  EXPECT_NE(ClassifyKernelName("Triton_Poi_fused_ALL_REDUCE_2"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("x_triton_poi_all_reduce"), LayerType::kCommunication);
  EXPECT_EQ(KernelNameTableRow("triton_poi_fused_add_all_reduce_2"), 9);
}

// Edge cases of the regex dialect: std::regex ECMAScript with icase must behave like the
// case-insensitive `search` docs/metrics.md means.
TEST(ClassifyKernelNameTest, RegexSemantics) {
  // Row 1: negative lookahead works with icase, and only at the start of the name.
  EXPECT_EQ(ClassifyKernelName("TRITON_poi_fused_all_reduce_1"), LayerType::kElementwise);
  EXPECT_EQ(ClassifyKernelName("NCCLDEVKERNEL_X"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("custom_allreduce_kernel"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("x_triton_all_gather"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("cross_device_reduce_1stage"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("gloo:all_reduce"), LayerType::kCommunication);
  EXPECT_EQ(ClassifyKernelName("my_nccl_wrapper"), LayerType::kOther);  // nccl anchored
  // Row 2: memcpy/memset/dma anchored at the start, the rest anywhere.
  EXPECT_EQ(ClassifyKernelName("Memset (Device)"), LayerType::kMemcpy);
  EXPECT_EQ(ClassifyKernelName("dmaCopy"), LayerType::kMemcpy);
  EXPECT_EQ(ClassifyKernelName("my_memcpy_kernel"), LayerType::kOther);
  // Row 3: `(^|[^a-z])mla(_|$)` needs word-ish boundaries (a digit is one: aiter mangling).
  EXPECT_EQ(ClassifyKernelName("mla_decode_kernel"), LayerType::kAttention);
  EXPECT_EQ(ClassifyKernelName("flashinfer_MLA"), LayerType::kAttention);
  EXPECT_EQ(ClassifyKernelName("run_mla"), LayerType::kAttention);
  EXPECT_EQ(ClassifyKernelName("simlab"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("xmlaunch"), LayerType::kOther);
  // Row 4 before row 5: conv kernels say "gemm".
  EXPECT_EQ(ClassifyKernelName("sm80_xmma_dgrad_implicit_gemm_x"), LayerType::kConv);
  EXPECT_EQ(ClassifyKernelName("Conv2d_fprop"), LayerType::kConv);
  // Row 5: `(^|[^a-z])b?mm_kernel` — a letter before "mm_kernel" is no boundary, also
  // in upper case (icase applies to the negated range).
  EXPECT_EQ(ClassifyKernelName("bmm_kernel"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("triton_BMM_KERNEL"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("_mm_kernel"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("xbmm_kernel"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("XBMM_KERNEL"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("SPLITKREDUCE"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("fused_moe_kernel"), LayerType::kMatmul);
  EXPECT_EQ(ClassifyKernelName("triton_tem_fused_mm_0"), LayerType::kMatmul);
  // Row 6: `triton_(red|per)_.*rsqrt`.
  EXPECT_EQ(ClassifyKernelName("triton_per_fused_add_mean_rsqrt_2"), LayerType::kNorm);
  EXPECT_EQ(ClassifyKernelName("triton_red_fused_sum_0"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("rsqrt_triton_red_x"), LayerType::kOther);
  EXPECT_EQ(ClassifyKernelName("RMSNorm"), LayerType::kNorm);
  // Row 9.
  EXPECT_EQ(ClassifyKernelName("act_and_mul_kernel"), LayerType::kElementwise);
  EXPECT_EQ(ClassifyKernelName("fill_kernel"), LayerType::kElementwise);
  EXPECT_EQ(ClassifyKernelName(""), LayerType::kOther);
}

struct RealKernel {
  const char* name;
  LayerType type;
  int row;          // the docs/metrics.md kernel-table row that decides it
  const char* why;  // trace it came from, and the match
};

// Real kernel names from shared/traces (one per line of that trace's "name"), covering
// every layer type. "SURPRISE" marks a name the table puts where an engineer would not:
// these pin today's docs/metrics.md behaviour; change them only together with the table.
const RealKernel kRealKernels[] = {
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", LayerType::kCommunication,
     1, "tl_b200: row 1 matches \"nccl\""},
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     LayerType::kCommunication, 1, "hta_nccl_a100: row 1 matches \"nccl\""},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
     LayerType::kCommunication, 1, "hta_sampled: row 1 matches \"nccl\""},
    {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloa"
     "t16*, unsigned long, unsigned int**, unsigned long, unsigned long)",
     LayerType::kCommunication, 1, "tl_b200: row 1 matches \"multimem_all_reduce\""},
    {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KV"
     "CacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigne"
     "d char*, long const*, long, long, long, long, long, int, int, int, float const*, flo"
     "at const*)",
     LayerType::kMemcpy, 2,
     "tl_b200: row 2 matches \"reshape_and_cache\"; row 2 precedes attention's \"flash\""},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<int, unsigned int, 1, 12"
     "8, 1>(int*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<int, unsign"
     "ed int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4"
     "u>, int, unsigned int)",
     LayerType::kMemcpy, 2, "hta_sampled: row 2 matches \"CatArrayBatchedCopy\""},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at:"
     ":TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#4}::operator()() "
     "const::{lambda(long)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsig"
     "ned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast"
     "<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda"
     "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#4}::operator("
     ")() const::{lambda(long)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsi"
     "gned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCas"
     "t<1>, at::native::memory::StoreWithCast<1>)",
     LayerType::kMemcpy, 2,
     "tl_b200: row 2 matches \"direct_copy_kernel\"; row 2 precedes elementwise"},
    {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
     LayerType::kAttention, 3, "tl_b200: row 3 matches \"fmha\""},
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128,"
     " 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 1"
     "28, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(p"
     "ytorch_flash::Flash_fwd_params)",
     LayerType::kAttention, 3,
     "tl_h100_qwen: row 3 matches \"flash\"; row 3 precedes matmul's \"cutlass\""},
    {"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuanti"
     "zationType)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, flo"
     "at const*, unsigned int*, unsigned int*, flashinfer::QuantizationSFLayout)",
     LayerType::kAttention, 3,
     "tl_b200: row 3 matches \"flash\"; "
     "SURPRISE: an FP4 quantize kernel; \"flash\" is in a flashinfer:: argument type"},
    {"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_st"
     "age5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
     LayerType::kConv, 4,
     "hta_nccl_a100: row 4 matches \"xmma_fprop\"; row 4 precedes matmul's \"gemm\""},
    {"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x6"
     "4x64_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
     LayerType::kConv, 4, "hta_nccl_a100: row 4 matches \"xmma_wgrad\""},
    {"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>"
     "(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigne"
     "d long long, int, float, float, int, float const*, float const*, bool, int, int)",
     LayerType::kConv, 4, "kineto_resnet50: row 4 matches \"implicit_convolve\""},
    {"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_"
     "nonfused::WinogradDataParams<float, float>)",
     LayerType::kConv, 4, "hta_ns_v100: row 4 matches \"winograd\""},
    {"void cudnn::cnn::im2col4d_kernel<float, long>(cudnn::cnn::im2col4d_params, cudnnConv"
     "olutionStruct, cudnnTensor4dStruct, float const*, float*)",
     LayerType::kConv, 4, "kineto_resnet50: row 4 matches \"cudnn::cnn\""},
    {"volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", LayerType::kConv, 4,
     "kineto_resnet50: row 4 matches \"winograd\""},
    {"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", LayerType::kMatmul, 5,
     "tl_b200: row 5 matches \"nvjet_\"; no \"gemm\" in it"},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execu"
     "te_segment_k_off_kernel__5x_cublas",
     LayerType::kMatmul, 5, "tl_h100_falconsai: row 5 matches \"gemm\""},
    {"ampere_sgemm_32x128_nt", LayerType::kMatmul, 5, "hta_nccl_a100: row 5 matches \"gemm\""},
    {"volta_sgemm_64x64_nn", LayerType::kMatmul, 5, "hta_ns_v100: row 5 matches \"gemm\""},
    {"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM"
     "1_ASEM1_CLR1_CADS0_EPS0_GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1_LBSPPA128_LBSPPB128_LBSPP"
     "M0_LPA8_LPB8_LPM0_LRVW4_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPB"
     "S2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_TLDS1_USFGROn1_VSn"
     "1_VWA1_VWB1_WSGRA1_WSGRB1_WS64_WG64_4_1",
     LayerType::kMatmul, 5, "hta_mi250: row 5 matches \"cijk_\"; ROCm hipBLASLt/Tensile GEMM"},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_"
     "align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params"
     ")",
     LayerType::kMatmul, 5, "tl_h100_bert: row 5 matches \"cutlass\"; bert-small worked example"},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, tr"
     "ue, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, "
     "float const*, float const*, float const*, float const*, float*, void*, long, float*,"
     " int*)",
     LayerType::kMatmul, 5, "hta_nccl_a100: row 5 matches \"cublas\""},
    {"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16"
     ", __nv_bfloat16, __nv_bfloat16, float, false, true, true, false, 7, false, cublasGem"
     "vParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensor"
     "StridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, "
     "float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>"
     ", cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatche"
     "d<__nv_bfloat16>, float>)",
     LayerType::kMatmul, 5, "tl_h100_timesformer: row 5 matches \"gemv\""},
    {"void gemmk1_kernel<float, 256, 5, false, false, false, false, cublasGemvTensorStride"
     "dBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensor"
     "StridedBatched<float>, float, true, true>(cublasGemmk1Params<float, cublasGemvTensor"
     "StridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemv"
     "TensorStridedBatched<float>, float, biasType<cublasGemvTensorStridedBatched<float>::"
     "value_type, float>::type>)",
     LayerType::kMatmul, 5, "hta_sampled: row 5 matches \"gemm\""},
    {"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_"
     "16x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align"
     "4::Params)",
     LayerType::kMatmul, 5,
     "hta_nccl_a100: row 5 matches \"cutlass\"; "
     "SURPRISE: a cuDNN conv (fprop) kernel; row 4 has no \"fprop\" without \"xmma_\""},
    {"void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(int, int, in"
     "t, float const*, int, float const*, int, float*, kernel_conv_params, unsigned long l"
     "ong, int, unsigned long long, int, float, float, int, float const*, float const*)",
     LayerType::kMatmul, 5,
     "kineto_resnet50: row 5 matches \"gemm\"; "
     "SURPRISE: a conv kernel; row 4 has \"implicit_convolve\" only"},
    {"void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at:"
     ":Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> "
     ">(int, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambd"
     "a(float)#1}, at::detail::Array<char*, 2>)",
     LayerType::kMatmul, 5,
     "hta_sampled: row 5 matches \"gemm\"; "
     "SURPRISE: an FP8 cast; \"gemm\" is inside \"fbgemm_gpu\""},
    {"void bounds_check_indices_kernel<long, false>(at::GenericPackedTensorAccessor<long, "
     "1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::Res"
     "trictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTrai"
     "ts, int>, int const*, long, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictP"
     "trTraits, int>, fbgemm_gpu::FixedDivisor)",
     LayerType::kMatmul, 5,
     "hta_sampled: row 5 matches \"gemm\"; "
     "SURPRISE: embedding bounds check; \"fbgemm_gpu::FixedDivisor\" argument"},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
     "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*,"
     " float*, float*, c10::BFloat16*)",
     LayerType::kNorm, 6, "tl_h100_falconsai: row 6 matches \"layer_norm\""},
    {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*"
     ", long, long, long, long, long, c10::BFloat16 const*, float, int, int)",
     LayerType::kNorm, 6, "tl_b200: row 6 matches \"rms_norm\""},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct,"
     " float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, "
     "float*, float*, float*, float*, float, float)",
     LayerType::kNorm, 6, "kineto_resnet50: row 6 matches \"bn_fw\""},
    {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long,"
     " float, float const*, float*, float*)",
     LayerType::kNorm, 6, "hta_sampled: row 6 matches \"RowwiseMoments\"; group norm statistics"},
    {"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type v"
     "llm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16"
     "*, c10::BFloat16 const*, float, int, int)",
     LayerType::kNorm, 6, "tl_b200: row 6 matches \"rms_norm\""},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float,"
     " c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFlo"
     "at16*, c10::BFloat16 const*, int)",
     LayerType::kSoftmax, 7, "tl_h100_timesformer: row 7 matches \"SoftMax\""},
    {"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float"
     ", 3, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*,"
     " int, bool)",
     LayerType::kSoftmax, 7, "tl_h100_timesformer: row 7 matches \"softmax\""},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, u"
     "nsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned in"
     "t>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detai"
     "l::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
     LayerType::kEmbedding, 8, "tl_h100_qwen: row 8 matches \"indexSelect\""},
    {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*,"
     " c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
     LayerType::kEmbedding, 8,
     "tl_b200: row 8 matches \"embedding\"; "
     "SURPRISE-ish: row 8 \"embedding\" precedes row 9 \"rotary\""},
    {"triton_poi_fused_add_cos_sin_0", LayerType::kElementwise, 9,
     "hta_triton: row 9 matches \"triton_poi_\""},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>"
     ", at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail:"
     ":Array<char*, 3>)",
     LayerType::kElementwise, 9, "hta_mi250: row 9 matches \"elementwise\""},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace):"
     ":silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6"
     "}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::"
     "native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::o"
     "perator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std:"
     ":array<char*, 2ul>)",
     LayerType::kElementwise, 9, "tl_h100_qwen: row 9 matches \"elementwise\""},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at:"
     ":TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lamb"
     "da()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int"
     ", at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{la"
     "mbda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat"
     "16)#1}, std::array<char*, 2ul>)",
     LayerType::kElementwise, 9, "tl_h100_falconsai: row 9 matches \"elementwise\""},
    {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_"
     "rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
     LayerType::kElementwise, 9,
     "tl_b200: row 9 matches \"swiGlu\"; "
     "SURPRISE: a TRT-LLM MoE GEMM with a fused SwiGLU epilogue"},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanO"
     "ps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::"
     "MeanOps<float, float>, unsigned int, float, 4>)",
     LayerType::kOther, 10, "kineto_resnet50: row 10: no rule matches; reductions have no row"},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::"
     "Policy800, false, long, int, int, int>(int*, int*, int*, int const*, long*, long con"
     "st*, int*, int const*, int, int, int)",
     LayerType::kOther, 10, "hta_sampled: row 10: no rule matches"},
    {"cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", LayerType::kOther, 10,
     "hta_ns_v100: row 10: no rule matches; SURPRISE: cuDNN implicit-GEMM conv, no rule"},
    {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256"
     "b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
     LayerType::kOther, 10,
     "tl_b200: row 10: no rule matches; SURPRISE: TRT-LLM batched GEMM; needs \"bmm_kernel\""},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(lo"
     "ng, long, float const*, float const*, float const*, float const*, float*, float*)",
     LayerType::kOther, 10, "hta_sampled: row 10: no rule matches; layer-norm backward, no rule"},
    {"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, f"
     "loat, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnn"
     "TensorStruct, float*, float const*, float*, float*, float const*, float const*, floa"
     "t)",
     LayerType::kOther, 10,
     "hta_nccl_a100: row 10: no rule matches; batch-norm backward: row 6 has bn_fw only"},

};

TEST(ClassifyKernelNameTest, RealKernelNamesFromTraces) {
  ASSERT_GE(std::size(kRealKernels), 37u);
  bool seen[kNumLayerTypes] = {};
  for (const RealKernel& k : kRealKernels) {
    SCOPED_TRACE(k.why);
    EXPECT_EQ(KernelNameTableRow(k.name), k.row) << k.name;
    EXPECT_EQ(LayerTypeName(ClassifyKernelName(k.name)), LayerTypeName(k.type)) << k.name;
    // Row r is layer type r-1 (the enum follows the table's order).
    EXPECT_EQ(static_cast<int>(k.type), k.row - 1) << k.name;
    seen[static_cast<int>(k.type)] = true;
  }
  for (int i = 0; i < kNumLayerTypes; ++i) {
    EXPECT_TRUE(seen[i]) << "no real kernel of type " << LayerTypeName(LayerType(i));
  }
}

TEST(ClassifyOperatorNameTest, Operators) {
  const Example operators[] = {
      {"aten::addmm", LayerType::kMatmul},
      {"aten::linear", LayerType::kMatmul},
      {"aten::mm", LayerType::kMatmul},
      {"aten::bmm", LayerType::kMatmul},
      {"aten::matmul", LayerType::kMatmul},
      {"aten::_scaled_mm", LayerType::kMatmul},
      {"aten::_flash_attention_forward", LayerType::kAttention},
      {"aten::scaled_dot_product_attention", LayerType::kAttention},
      {"aten::_scaled_dot_product_flash_attention", LayerType::kAttention},
      {"vllm::unified_attention_with_output", LayerType::kAttention},
      {"aten::native_layer_norm", LayerType::kNorm},
      {"aten::batch_norm", LayerType::kNorm},
      {"_C::rms_norm", LayerType::kNorm},
      {"aten::_softmax", LayerType::kSoftmax},
      {"aten::_log_softmax", LayerType::kSoftmax},
      {"aten::embedding", LayerType::kEmbedding},
      {"aten::index_select", LayerType::kEmbedding},
      {"aten::copy_", LayerType::kMemcpy},
      {"aten::_to_copy", LayerType::kMemcpy},
      {"aten::to", LayerType::kMemcpy},
      {"aten::cat", LayerType::kMemcpy},
      {"aten::conv2d", LayerType::kConv},
      {"aten::cudnn_convolution", LayerType::kConv},
      {"aten::convolution_backward", LayerType::kConv},
      {"c10d::allreduce_", LayerType::kCommunication},
      {"nccl:all_reduce", LayerType::kCommunication},
      {"vllm::all_reduce", LayerType::kCommunication},
      {"symm_mem::multimem_all_reduce_", LayerType::kCommunication},
      // Surprises, real operator names from shared/traces:
      {"aten::broadcast_tensors", LayerType::kCommunication},  // "broadcast_"
      {"aten::normal_", LayerType::kNorm},                     // random init; "norm"
      {"fbgemm::bounds_check_indices", LayerType::kMatmul},    // "gemm" in "fbgemm"
      {"fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function",
       LayerType::kMatmul},  // matmul's row precedes embedding's
      {"_C_cache_ops::reshape_and_cache_flash", LayerType::kAttention},  // kernel: memcpy
      {"fb::convex_sum", LayerType::kConv},                              // "conv"
  };
  for (const Example& e : operators) {
    const std::optional<LayerType> type = ClassifyOperatorName(e.name);
    ASSERT_TRUE(type.has_value()) << e.name;
    EXPECT_EQ(LayerTypeName(*type), LayerTypeName(e.type)) << e.name;
  }
  // No rule: the caller takes the layer type holding most of the kernels' GPU time.
  for (const char* name :
       {"aten::add", "aten::mul", "aten::add_", "aten::relu", "aten::sum", "aten::_cat",
        "aten::clone_", "aten::where", "record_param_comms", "ProfilerStep#6", ""}) {
    EXPECT_EQ(ClassifyOperatorName(name), std::nullopt) << name;
  }
}

TEST(LayerClassifierTest, MemoizesByNameAndById) {
  LayerClassifier classifier;
  const std::vector<std::string> names = {"ampere_sgemm_32x128_nt", "cunn_SoftMaxForward",
                                          "topkGating", "triton_poi_fused_mul_silu_slice_0"};
  const std::vector<LayerType> expected = {LayerType::kMatmul, LayerType::kSoftmax,
                                           LayerType::kOther, LayerType::kElementwise};
  for (int round = 0; round < 100000; ++round) {
    for (size_t i = 0; i < names.size(); ++i) {
      ASSERT_EQ(classifier.ClassifyKernel(names[i]), expected[i]);
      ASSERT_EQ(classifier.ClassifyKernel(static_cast<StringId>(i + 1), names[i]), expected[i]);
    }
  }
  EXPECT_EQ(classifier.evaluations(), 2 * names.size());

  // Operator results, including "no rule", are cached separately from kernel results.
  EXPECT_EQ(classifier.ClassifyOperator("aten::addmm"), LayerType::kMatmul);
  EXPECT_EQ(classifier.ClassifyOperator("aten::addmm"), LayerType::kMatmul);
  EXPECT_EQ(classifier.ClassifyOperator("aten::add"), std::nullopt);
  EXPECT_EQ(classifier.ClassifyOperator("aten::add"), std::nullopt);
  EXPECT_EQ(classifier.ClassifyOperator(StringId{1}, "aten::softmax"), LayerType::kSoftmax);
  EXPECT_EQ(classifier.ClassifyOperator(StringId{1}, "aten::softmax"), LayerType::kSoftmax);
  EXPECT_EQ(classifier.ClassifyOperator(StringId{2}, "aten::mul"), std::nullopt);
  EXPECT_EQ(classifier.ClassifyOperator(StringId{2}, "aten::mul"), std::nullopt);
  EXPECT_EQ(classifier.evaluations(), 2 * names.size() + 4);
  // Id 1 still means the kernel name it meant before.
  EXPECT_EQ(classifier.ClassifyKernel(StringId{1}, names[0]), LayerType::kMatmul);

  LayerClassifier moved = std::move(classifier);
  EXPECT_EQ(moved.ClassifyKernel(names[1]), LayerType::kSoftmax);
  EXPECT_EQ(moved.evaluations(), 2 * names.size() + 4);
}

// Rows 1 and 6 contain `.*`: a backtracking regex engine recurses once per character
// there and overflows the stack on long input. Classify a 64 KiB name on a thread with a
// 256 KiB stack (collector threads may have small stacks).
void* ClassifyHugeNames(void* out) {
  std::string name(1 << 16, 'a');
  auto* results = static_cast<std::vector<int>*>(out);
  results->push_back(KernelNameTableRow(name));
  name.replace(0, 11, "triton_red_");
  name.replace(name.size() - 5, 5, "rsqrt");
  results->push_back(KernelNameTableRow(name));
  name.replace(name.size() - 12, 12, "_all_reduce_");
  name.replace(0, 11, "xxxxxxxxxxx");
  results->push_back(KernelNameTableRow(name));
  return nullptr;
}

TEST(ClassifyKernelNameTest, HugeNameOnSmallStack) {
  std::vector<int> rows;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, &ClassifyHugeNames, &rows), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(rows, (std::vector<int>{10, 6, 1}));
}

}  // namespace
}  // namespace opmap::analysis
