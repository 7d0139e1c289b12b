// The library users import: `import Geotrigger` brings every layer.
@_exported import GeotriggerCore
@_exported import GeotriggerGeometry
@_exported import GeotriggerMonitoring
@_exported import GeotriggerReadings
@_exported import GeotriggerScheduling
