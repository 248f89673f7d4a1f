//! The metrics of storage version migrations ([`crate::migration`]), by CRD (the `resource`
//! label, e.g. `widgets.example.com`), with the names and help of kube-storage-version-migrator's
//! (its `pkg/migrator/metrics`), so that its dashboards and alerts work unchanged:
//! `storage_migrator_core_migrator_migrated_objects_total`,
//! `storage_migrator_core_migrator_remaining_objects` and
//! `storage_migrator_core_migrator_migrations_total` (by `status` too: `Succeeded`, `Failed`).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    resource: String,
    status: &'static str,
}

/// The storage migration families of a registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct StorageMigrationMetrics {
    migrated: Family<ResourceLabels, Counter>,
    remaining: Family<ResourceLabels, Gauge>,
    migrations: Family<OutcomeLabels, Counter>,
}

impl StorageMigrationMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let metrics = StorageMigrationMetrics {
            migrated: Family::default(),
            remaining: Family::default(),
            migrations: Family::default(),
        };
        // Counters get their `_total` suffix from the encoder.
        registry.register(
            "storage_migrator_core_migrator_migrated_objects",
            "The number of objects that have been migrated, labeled with the full resource name.",
            metrics.migrated.clone(),
        );
        registry.register(
            "storage_migrator_core_migrator_remaining_objects",
            "The number of objects that still require migration, labeled with the full resource name",
            metrics.remaining.clone(),
        );
        registry.register(
            "storage_migrator_core_migrator_migrations",
            "The number of completed migration, labeled with the full resource name, and the status of the migration (failed or succeeded)",
            metrics.migrations.clone(),
        );
        metrics
    }

    /// The metrics of the migration of the CRD `resource` (`<plural>.<group>`), whose series
    /// start at 0.
    pub fn resource(&self, resource: &str) -> ResourceMigrationMetrics {
        let labels = ResourceLabels {
            resource: resource.to_owned(),
        };
        drop(self.migrated.get_or_create(&labels));
        self.remaining.get_or_create(&labels).set(0);
        for status in [SUCCEEDED, FAILED] {
            drop(self.migrations.get_or_create(&outcome(&labels, status)));
        }
        ResourceMigrationMetrics {
            labels,
            families: self.clone(),
        }
    }
}

const SUCCEEDED: &str = "Succeeded";
const FAILED: &str = "Failed";

fn outcome(labels: &ResourceLabels, status: &'static str) -> OutcomeLabels {
    OutcomeLabels {
        resource: labels.resource.clone(),
        status,
    }
}

/// The storage migration metrics of one CRD.
#[derive(Clone, Debug)]
pub struct ResourceMigrationMetrics {
    labels: ResourceLabels,
    families: StorageMigrationMetrics,
}

impl ResourceMigrationMetrics {
    /// One more object written again in the storage version.
    pub fn migrated(&self) {
        self.families.migrated.get_or_create(&self.labels).inc();
    }

    /// How many objects the current pass has still to write.
    pub fn set_remaining(&self, remaining: u64) {
        let remaining = i64::try_from(remaining).unwrap_or(i64::MAX);
        self.families
            .remaining
            .get_or_create(&self.labels)
            .set(remaining);
    }

    /// A migration ended: `succeeded` once `status.storedVersions` is the storage version alone.
    pub fn finished(&self, succeeded: bool) {
        let status = if succeeded { SUCCEEDED } else { FAILED };
        let labels = outcome(&self.labels, status);
        self.families.migrations.get_or_create(&labels).inc();
    }
}
