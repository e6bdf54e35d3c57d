//! What a fake node of a Compute Engine machine type has: CPUs and memory from the type's name
//! (`e2-standard-4`: 4 CPUs, 16 GiB), the same numbers the fake cluster's Node objects report
//! and its embedded bcd daemons send.

/// CPUs and memory of a machine type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MachineShape {
    pub cpus: i64,
    pub memory_gib: i64,
}

/// The shape of `machine_type`: the shared-core types by name, `<family>-<class>-<cpus>` by its
/// class's memory per CPU, and 2 CPUs with 8 GiB for anything else.
pub fn shape(machine_type: &str) -> MachineShape {
    let fixed = match machine_type {
        "e2-micro" => Some((2, 1)),
        "e2-small" => Some((2, 2)),
        "e2-medium" => Some((2, 4)),
        "f1-micro" | "g1-small" => Some((1, 2)),
        _ => None,
    };
    if let Some((cpus, memory_gib)) = fixed {
        return MachineShape { cpus, memory_gib };
    }
    let mut parts = machine_type.rsplitn(3, '-');
    let cpus = parts.next().and_then(|n| n.parse::<i64>().ok());
    let class = parts.next();
    match (cpus, class) {
        (Some(cpus), Some(class)) if cpus > 0 => {
            let per_cpu = match class {
                "highmem" => 8,
                "highcpu" => 1,
                "megamem" | "ultramem" => 24,
                _ => 4,
            };
            MachineShape { cpus, memory_gib: cpus * per_cpu }
        }
        _ => MachineShape { cpus: 2, memory_gib: 8 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_type_name_with_a_fallback() {
        assert_eq!(shape("e2-standard-4"), MachineShape { cpus: 4, memory_gib: 16 });
        assert_eq!(shape("n2-highmem-8"), MachineShape { cpus: 8, memory_gib: 64 });
        assert_eq!(shape("e2-medium"), MachineShape { cpus: 2, memory_gib: 4 });
        assert_eq!(shape("custom"), MachineShape { cpus: 2, memory_gib: 8 });
    }
}
