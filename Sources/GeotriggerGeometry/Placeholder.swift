// GeotriggerGeometry
