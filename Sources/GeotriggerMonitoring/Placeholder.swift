// GeotriggerMonitoring
