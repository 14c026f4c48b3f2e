// Filter implementations shared between filters.cpp (strings, scalars, dispatch) and
// filters_seq.cpp (sequences and mappings).
#pragma once

#include "template/builtins.hpp"
#include "template/interpreter.hpp"

namespace arbor::tmpl {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

Value f_batch(Interpreter&, const Value&, CallArgs&);
Value f_dictsort(Interpreter&, const Value&, CallArgs&);
Value f_first(Interpreter&, const Value&, CallArgs&);
Value f_items(Interpreter&, const Value&, CallArgs&);
Value f_join(Interpreter&, const Value&, CallArgs&);
Value f_last(Interpreter&, const Value&, CallArgs&);
Value f_length(Interpreter&, const Value&, CallArgs&);
Value f_list(Interpreter&, const Value&, CallArgs&);
Value f_map(Interpreter&, const Value&, CallArgs&);
Value f_max(Interpreter&, const Value&, CallArgs&);
Value f_min(Interpreter&, const Value&, CallArgs&);
Value f_reject(Interpreter&, const Value&, CallArgs&);
Value f_rejectattr(Interpreter&, const Value&, CallArgs&);
Value f_reverse(Interpreter&, const Value&, CallArgs&);
Value f_select(Interpreter&, const Value&, CallArgs&);
Value f_selectattr(Interpreter&, const Value&, CallArgs&);
Value f_slice(Interpreter&, const Value&, CallArgs&);
Value f_sort(Interpreter&, const Value&, CallArgs&);
Value f_sum(Interpreter&, const Value&, CallArgs&);
Value f_unique(Interpreter&, const Value&, CallArgs&);

}  // namespace arbor::tmpl
