# Compile flags shared by every Arbor target.
# Bit-exactness: no fast-math and no implicit FMA contraction anywhere. Code that wants an FMA
# writes std::fma / fmaf explicitly, so the CPU and the GPU round the same way.
function(arbor_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -ffp-contract=off -fno-fast-math>)
endfunction()
