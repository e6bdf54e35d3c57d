//! What a fake node of a Compute Engine machine type has: CPUs and memory from the type's name
//! (`e2-standard-4`: 4 CPUs, 16 GiB), the same numbers the fake cluster's Node objects report
//! and its embedded bcd daemons send; and which names Compute Engine knows at all, so that the
//! fake GKE refuses a misspelt type (`e2-standrad-4`) as GKE does instead of making its nodes.

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

/// The shared-core types, known by name.
const SHARED_CORE: &[&str] = &["e2-micro", "e2-small", "e2-medium", "f1-micro", "g1-small"];

/// The families of `<family>-<class>-<cpus>` types and their classes.
const FAMILIES: &[(&str, &[&str])] = &[
    ("e2", &["standard", "highmem", "highcpu"]),
    ("n1", &["standard", "highmem", "highcpu"]),
    ("n2", &["standard", "highmem", "highcpu"]),
    ("n2d", &["standard", "highmem", "highcpu"]),
    ("n4", &["standard", "highmem", "highcpu"]),
    ("c2", &["standard"]),
    ("c2d", &["standard", "highmem", "highcpu"]),
    ("c3", &["standard", "highmem", "highcpu"]),
    ("c3d", &["standard", "highmem", "highcpu"]),
    ("c4", &["standard", "highmem", "highcpu"]),
    ("t2d", &["standard"]),
    ("t2a", &["standard"]),
    ("g2", &["standard"]),
    ("m1", &["megamem", "ultramem"]),
    ("m2", &["megamem", "ultramem"]),
    ("m3", &["megamem", "ultramem"]),
];

/// The GPU families, whose last part counts GPUs (`a2-highgpu-1g`), and their classes.
const GPU_FAMILIES: &[(&str, &[&str])] =
    &[("a2", &["highgpu", "megagpu", "ultragpu"]), ("a3", &["highgpu", "megagpu", "edgegpu", "ultragpu"])];

/// Whether Compute Engine has a machine type of this name: a shared-core type, a
/// `<family>-<class>-<cpus>` of a known family and class, a GPU type (`a2-highgpu-1g`) or a
/// custom one (`n2-custom-4-16384`, `custom-4-16384` for N1).
pub fn exists(machine_type: &str) -> bool {
    if SHARED_CORE.contains(&machine_type) {
        return true;
    }
    let number = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0');
    let parts: Vec<&str> = machine_type.split('-').collect();
    match parts.as_slice() {
        ["custom", cpus, memory] => number(cpus) && number(memory),
        [family, "custom", cpus, memory] => {
            ["e2", "n1", "n2", "n2d", "n4"].contains(family) && number(cpus) && number(memory)
        }
        [family, class, cpus] => {
            let in_table =
                |table: &[(&str, &[&str])]| table.iter().any(|(f, classes)| f == family && classes.contains(class));
            (in_table(FAMILIES) && number(cpus))
                || (in_table(GPU_FAMILIES) && cpus.strip_suffix('g').is_some_and(number))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_exist_and_misspelt_ones_do_not() {
        for known in ["e2-standard-4", "e2-medium", "n2-highmem-8", "g2-standard-8", "a2-highgpu-1g", "custom-4-16384"]
        {
            assert!(exists(known), "{known}");
        }
        for unknown in
            ["e2-standrad-4", "e2-standard", "e2-standard-04", "x9-standard-4", "Bad Type", "", "a2-highgpu-1"]
        {
            assert!(!exists(unknown), "{unknown}");
        }
    }

    #[test]
    fn shapes_follow_the_type_name_with_a_fallback() {
        assert_eq!(shape("e2-standard-4"), MachineShape { cpus: 4, memory_gib: 16 });
        assert_eq!(shape("n2-highmem-8"), MachineShape { cpus: 8, memory_gib: 64 });
        assert_eq!(shape("e2-medium"), MachineShape { cpus: 2, memory_gib: 4 });
        assert_eq!(shape("custom"), MachineShape { cpus: 2, memory_gib: 8 });
    }
}
