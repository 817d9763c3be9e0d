//! Text forms of the IR: an SSA listing (what `wayfarer explain` prints and the golden files
//! pin) and inline formulas (for bounds and estimates).

use crate::ir::*;
use std::fmt::Write as _;

fn literal(l: &Literal) -> String {
    match *l {
        Literal::Float(v, t) if v.is_infinite() => format!("{}inf_{}", if v < 0.0 { "-" } else { "" }, t.name()),
        Literal::Float(v, t) => {
            let s = if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.1}") } else { format!("{v}") };
            format!("{s}{}", t.name())
        }
        Literal::Int(v, t) if t == Scalar::U32 && v == u32::MAX as i64 => "NO_NODE".to_string(),
        Literal::Int(v, t) => format!("{v}{}", t.name()),
        Literal::Bool(b) => b.to_string(),
    }
}

/// A hash of what a program computes (its IR listing, without source positions, and the node
/// properties it reads): the same for the same program however often and wherever it is
/// parsed, and different when an edit changes what it computes. Caches key on it.
pub fn fingerprint(f: &Program) -> u64 {
    let mut h = wayfarer_core::hash::Fnv64::default();
    h.write(listing(f).as_bytes());
    for p in &f.props {
        h.write(p.as_bytes());
    }
    h.finish()
}

/// The handles reachable from the result, in arena order (operands first).
pub fn live(f: &Program) -> Vec<Handle<Expr>> {
    live_in(&f.exprs, &[f.result])
}

/// The handles of `exprs` reachable from `roots`, in arena order (operands first).
pub fn live_in(exprs: &Arena<Expr>, roots: &[Handle<Expr>]) -> Vec<Handle<Expr>> {
    let mut seen = vec![false; exprs.len()];
    let mut stack = roots.to_vec();
    while let Some(h) = stack.pop() {
        if !std::mem::replace(&mut seen[h.index()], true) {
            stack.extend(exprs.get(h).operands());
        }
    }
    exprs.iter().map(|(h, _)| h).filter(|h| seen[h.index()]).collect()
}

/// SSA lines of the live part of one arena, renumbered densely; returns the numbering.
fn ssa(out: &mut String, f: &Program, exprs: &Arena<Expr>, types: &[Scalar], roots: &[Handle<Expr>]) -> Vec<usize> {
    let order = live_in(exprs, roots);
    let mut number = vec![usize::MAX; exprs.len()];
    for (i, h) in order.iter().enumerate() {
        number[h.index()] = i;
    }
    let r = |h: &Handle<Expr>| format!("%{}", number[h.index()]);
    for h in &order {
        let rhs = match exprs.get(*h) {
            Expr::Literal(l) => literal(l),
            Expr::Param(i) => format!("param {}", f.params[*i].name),
            Expr::ParamIndex { param, index } => format!("{}[{}]", f.params[*param].name, r(index)),
            Expr::Step(s) => format!("step.{}()", s.signature().0),
            Expr::Unary { op: UnaryOp::Neg, arg } => format!("-{}", r(arg)),
            Expr::Unary { op: UnaryOp::Not, arg } => format!("!{}", r(arg)),
            Expr::Binary { op, lhs, rhs } => format!("{} {} {}", r(lhs), op.symbol(), r(rhs)),
            Expr::Select { cond, then, other } => format!("select {} ? {} : {}", r(cond), r(then), r(other)),
            Expr::Call { func, args } => format!("{}({})", func.name(), args.iter().map(r).collect::<Vec<_>>().join(", ")),
            Expr::Cast { expr, to } => format!("{} as {}", r(expr), to.name()),
            Expr::Node(q) => node_query(q, &|h| r(&h)),
            Expr::State(i) => format!("state {}", f.state[*i].name),
            Expr::Draw(k) => format!("draw {k}"),
        };
        let _ = writeln!(out, "  {} = {rhs} : {}", r(h), types[h.index()].name());
    }
    number
}

/// The SSA listing of a walk: one line per live expression, renumbered densely; for the impl
/// form, the state and each routine follow `get_weight`.
pub fn listing(f: &Program) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| {
            let ty = match p.ty {
                ParamType::Scalar(s) => format!("{}: {}", p.name, s.name()),
                ParamType::Array(s, n) => format!("{}: [{}; {n}]", p.name, s.name()),
            };
            match &p.default {
                None => ty,
                Some(ParamDefault::LengthOf(j)) => format!("{ty} = {}.len()", f.params[*j].name),
                Some(ParamDefault::Value(crate::eval::ParamValue::Array(xs))) => {
                    let xs: Vec<String> = xs.iter().map(|x| crate::params::show_value(&crate::eval::ParamValue::Scalar(*x))).collect();
                    format!("{ty} = [{}]", xs.join(", "))
                }
                Some(ParamDefault::Value(v)) => format!("{ty} = {}", crate::params::show_value(v)),
            }
        })
        .collect();
    let mut out = format!("walk {}({}) -> f32\n", f.name, params.join(", "));
    for c in &f.checks {
        let _ = writeln!(out, "  check {}", c.text);
    }
    if let Some(i) = f.length {
        let _ = writeln!(out, "  length {}", f.params[i].name);
    }
    let number = ssa(&mut out, f, &f.exprs, &f.types, &[f.result]);
    let _ = writeln!(out, "  return %{}", number[f.result.index()]);
    if f.form == Form::Impl {
        let fields: Vec<String> = f.state.iter().map(|s| format!("{}: {}", s.name, s.ty.name())).collect();
        let _ = writeln!(out, "state {{ {} }}", fields.join(", "));
        for (name, r) in [("init", &f.init), ("update", &f.update), ("stop", &f.stop)] {
            let Some(r) = r else { continue };
            let _ = writeln!(out, "{name} (draws {})", r.draws);
            let number = ssa(&mut out, f, &r.exprs, &r.types, &r.outputs);
            let n = |h: &Handle<Expr>| format!("%{}", number[h.index()]);
            if name == "stop" {
                let _ = writeln!(out, "  return {}", n(&r.outputs[0]));
                continue;
            }
            for (s, h) in f.state.iter().zip(&r.outputs) {
                let _ = writeln!(out, "  state.{} <- {}", s.name, n(h));
            }
            if name == "update" {
                let k = f.state.len();
                let _ = writeln!(out, "  cur <- {}", n(&r.outputs[k]));
                let _ = writeln!(out, "  prev <- {}", n(&r.outputs[k + 1]));
            }
        }
    }
    out
}

fn node_query(q: &NodeQuery, sub: &dyn Fn(Handle<Expr>) -> String) -> String {
    match q {
        NodeQuery::WeightMax => "h_max(cur)".into(),
        NodeQuery::WeightMin => "h_min(cur)".into(),
        NodeQuery::WeightSum => "h_sum(cur)".into(),
        NodeQuery::Degree => "degree(cur)".into(),
        NodeQuery::BackWeight => "h_back(cur, prev)".into(),
        NodeQuery::BackCount => "count_back(cur, prev)".into(),
        NodeQuery::LabelMax(l) => format!("h_max_label(cur, {})", sub(*l)),
        NodeQuery::LabelSum(l) => format!("h_sum_label(cur, {})", sub(*l)),
        NodeQuery::LabelCount(l) => format!("count_label(cur, {})", sub(*l)),
        NodeQuery::NeighborDegreeMax => "nbr_degree_max(cur)".into(),
        NodeQuery::NeighborDegreeMin => "nbr_degree_min(cur)".into(),
    }
}

/// An expression as one inline formula, e.g. `select(step.step() == 0u32, step.weight(), ...)`.
pub fn formula(f: &Program, h: Handle<Expr>) -> String {
    formula_in(&f.exprs, &f.params, &f.state, h)
}

/// A formula of an expression in any arena (weight functions and derived expressions).
pub fn formula_in(exprs: &Arena<Expr>, params: &[Param], state: &[StateField], h: Handle<Expr>) -> String {
    formula_named(exprs, params, state, h, &std::collections::HashMap::new())
}

/// A formula with the subexpressions it repeats named: `(lets, formula)`, where each let is
/// `(name, formula)` and may use earlier names. A subexpression is named when it occurs at
/// least twice in the written-out formula and is not short.
pub fn formula_lets(exprs: &Arena<Expr>, params: &[Param], state: &[StateField], root: Handle<Expr>) -> (Vec<(String, String)>, String) {
    let order = live_in(exprs, &[root]);
    let leaf = |h: Handle<Expr>| matches!(exprs.get(h), Expr::Literal(_) | Expr::Param(_) | Expr::Step(_) | Expr::Node(_) | Expr::State(_));
    // Occurrences in the written-out formula, a named subexpression written once (its let).
    let occurrences = |named: &[Handle<Expr>]| {
        let mut count = vec![0usize; exprs.len()];
        count[root.index()] = 1;
        for h in order.iter().rev() {
            let times = if named.contains(h) { count[h.index()].min(1) } else { count[h.index()] };
            for o in exprs.get(*h).operands() {
                count[o.index()] += times;
            }
        }
        count
    };
    // Outermost first: naming a subexpression removes the repeats inside it.
    let mut named: Vec<Handle<Expr>> = Vec::new();
    loop {
        let count = occurrences(&named);
        let next = order.iter().rev().copied().find(|&h| {
            h != root && !leaf(h) && !named.contains(&h) && count[h.index()] >= 2 && formula_in(exprs, params, state, h).len() >= 16
        });
        match next {
            Some(h) => named.push(h),
            None => break,
        }
    }
    // Defined inner first, so each let uses only earlier names.
    named.sort_by_key(|h| h.index());
    let mut names = std::collections::HashMap::new();
    let mut lets = Vec::new();
    for h in named {
        let text = formula_named(exprs, params, state, h, &names);
        let name = format!("t{}", lets.len() + 1);
        names.insert(h.index(), name.clone());
        lets.push((name, text));
    }
    (lets, formula_named(exprs, params, state, root, &names))
}

fn formula_named(
    exprs: &Arena<Expr>,
    params: &[Param],
    state: &[StateField],
    h: Handle<Expr>,
    names: &std::collections::HashMap<usize, String>,
) -> String {
    let go = |x: &Handle<Expr>| match names.get(&x.index()) {
        Some(n) => n.clone(),
        None => formula_named(exprs, params, state, *x, names),
    };
    match exprs.get(h) {
        Expr::Literal(l) => literal(l),
        Expr::Param(i) => params[*i].name.clone(),
        Expr::ParamIndex { param, index } => format!("{}[{}]", params[*param].name, go(index)),
        Expr::Step(s) => format!("{}()", s.signature().0),
        Expr::Unary { op: UnaryOp::Neg, arg } => format!("-({})", go(arg)),
        Expr::Unary { op: UnaryOp::Not, arg } => format!("!({})", go(arg)),
        Expr::Binary { op, lhs, rhs } => format!("({} {} {})", go(lhs), op.symbol(), go(rhs)),
        Expr::Select { cond, then, other } => format!("if {} {{ {} }} else {{ {} }}", go(cond), go(then), go(other)),
        Expr::Call { func, args } => format!("{}({})", func.name(), args.iter().map(go).collect::<Vec<_>>().join(", ")),
        Expr::Cast { expr, to } => format!("({} as {})", go(expr), to.name()),
        Expr::Node(q) => node_query(q, &|x| go(&x)),
        Expr::State(i) => format!("state.{}", state[*i].name),
        Expr::Draw(k) => format!("uniform#{k}"),
    }
}

/// The analysis table of a walk: flags, per-node arrays, `B` and `Ŝ` as formulas, and the
/// reason for a fallback.
pub fn analysis(f: &Program, info: &crate::analysis::WalkInfo) -> String {
    let d = &info.derived;
    let mut out = String::new();
    let _ = writeln!(out, "paths:         {}", info.paths);
    let _ = writeln!(out, "possible zero: {}", info.possible_zero);
    let _ = writeln!(out, "exact sum:     {}", info.sum_exact);
    let _ = writeln!(out, "arrays:        {}", if info.arrays.is_empty() { "none".to_string() } else { info.arrays.join("; ") });
    let branches = |out: &mut String, label: &str, scope: &dyn std::fmt::Debug, root: Handle<Expr>| {
        let parts = crate::simplify::branch_formulas(d, &f.params, &f.state, root);
        match parts.as_slice() {
            [(when, formula)] if when.is_empty() => {
                let _ = writeln!(out, "{label}{scope:?}  {formula}");
            }
            _ => {
                let _ = writeln!(out, "{label}{scope:?}");
                for (when, formula) in &parts {
                    let _ = writeln!(out, "    when {when}:\n        {formula}");
                }
            }
        }
    };
    match info.bound {
        Some(b) => branches(&mut out, "bound B:       ", &info.bound_scope, b),
        None => {
            let _ = writeln!(out, "bound B:       none: eRVS only ({})", info.fallback.as_deref().unwrap_or("unknown reason"));
        }
    }
    branches(&mut out, "estimate Ŝ:    ", &info.estimate_scope, info.sum_estimate);
    proposal(&mut out, f, info);
    let mut roots: Vec<Handle<Expr>> = info.bound.into_iter().chain([info.sum_estimate]).collect();
    if let Ok(p) = &info.proposal {
        roots.extend(p.terms.iter().map(|t| t.bound).chain(p.label));
    }
    let used = crate::analysis::reachable(d, &roots);
    let mut legend: Vec<&str> = Vec::new();
    for h in used {
        if let Expr::Node(q) = d.exprs.get(h) {
            let words = node_words(q);
            if !legend.contains(&words) {
                legend.push(words);
            }
        }
    }
    if !legend.is_empty() {
        let _ = writeln!(out, "where:");
        for w in legend {
            let _ = writeln!(out, "    {w}");
        }
    }
    out
}

/// The proposal plan: each term, the proposal that serves it and its bound `R` per branch, or
/// why the walk proposes uniformly.
fn proposal(out: &mut String, f: &Program, info: &crate::analysis::WalkInfo) {
    use crate::analysis::ProposalCond;
    let p = match &info.proposal {
        Ok(p) => p,
        Err(why) => {
            let _ = writeln!(out, "proposal:      uniform ({why})");
            return;
        }
    };
    let d = &info.derived;
    let _ = writeln!(
        out,
        "proposal:      structured: w(e) <= sum of R_k * s_k(e) over the edges term k selects; a trial picks a term by its mass, draws from it, accepts with w / envelope"
    );
    let _ = writeln!(out, "    (on the CPU and CUDA; the wgpu backend proposes uniformly and says so in its summary)");
    for (k, t) in p.terms.iter().enumerate() {
        let s = t.factor.map_or("1".to_string(), |i| formula(f, p.factors[i]));
        let (edges, how) = match (t.cond, t.factor) {
            (ProposalCond::All, None) => ("every edge of cur", "a uniform edge"),
            (ProposalCond::All, Some(_)) => ("every edge of cur", "an alias table of s per row (built once)"),
            (ProposalCond::Label, None) => ("cur's edges labelled L", "a uniform edge of the (cur, L) segment"),
            (ProposalCond::Label, Some(_)) => ("cur's edges labelled L", "an alias table of s per (node, label) segment"),
            (ProposalCond::Back, _) => ("cur's edges back to prev", "one of the edges back, by s"),
            (ProposalCond::PrevNeighbor, _) => {
                ("cur's edges to neighbours of prev (has_edge(prev, dst))", "a uniform edge of prev's row, kept if cur has it")
            }
        };
        let _ = writeln!(out, "    term {}: s = {s} over {edges}; proposal: {how}", k + 1);
        let parts = crate::simplify::branch_formulas(d, &f.params, &f.state, t.bound);
        match parts.as_slice() {
            [(when, formula)] if when.is_empty() => {
                let _ = writeln!(out, "        R = {formula}");
            }
            _ => {
                for (when, formula) in &parts {
                    let _ = writeln!(out, "        R when {when}: {formula}");
                }
            }
        }
    }
    if let Some(l) = p.label {
        let _ = writeln!(out, "    L = {}", crate::print::formula_in(&d.exprs, &f.params, &f.state, l));
    }
    if p.exact {
        let why = if p.always_structured() {
            "the adaptive rule always takes this proposal where the row has tables"
        } else {
            "over the whole row the cost model still weighs it against plain eRJS"
        };
        let _ = writeln!(
            out,
            "    exact: w(e) is the envelope on every edge, so a candidate is taken untested (with a has_edge(prev, dst) term: on graphs without parallel edges); {why}"
        );
    }
}

/// What a per-node quantity in a bound means, in words (`h` is the weight's edge term).
fn node_words(q: &NodeQuery) -> &'static str {
    match q {
        NodeQuery::WeightMax => "h_max(cur): the largest h on cur's edges",
        NodeQuery::WeightMin => "h_min(cur): the smallest h on cur's edges",
        NodeQuery::WeightSum => "h_sum(cur): the sum of h over cur's edges",
        NodeQuery::Degree => "degree(cur): cur's number of edges",
        NodeQuery::BackWeight => "h_back(cur, prev): the largest h on cur's edges back to prev (0 if none; a binary search)",
        NodeQuery::BackCount => "count_back(cur, prev): how many of cur's edges go back to prev",
        NodeQuery::LabelMax(_) => "h_max_label(cur, l): the largest h on cur's edges labelled l",
        NodeQuery::LabelSum(_) => "h_sum_label(cur, l): the sum of h over cur's edges labelled l",
        NodeQuery::LabelCount(_) => "count_label(cur, l): how many of cur's edges are labelled l",
        NodeQuery::NeighborDegreeMax => "nbr_degree_max(cur): the largest degree among cur's neighbours",
        NodeQuery::NeighborDegreeMin => "nbr_degree_min(cur): the smallest degree among cur's neighbours",
    }
}
