// Speed, context fill, backend and live GPU readings.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ToolBar {
    id: root
    objectName: "statusBar"
    height: 28
    position: ToolBar.Footer

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 10
        anchors.rightMargin: 10
        spacing: 18

        Label {
            objectName: "statusSpeed"
            text: qsTr("— tok/s")
            Accessible.name: qsTr("Decode speed")
        }
        Label {
            objectName: "statusContext"
            text: qsTr("context —")
            Accessible.name: qsTr("Context fill")
        }
        Item { Layout.fillWidth: true }
        Label {
            objectName: "statusBackend"
            text: AppState.backendDescription
            elide: Text.ElideRight
            Accessible.name: qsTr("Backend and device")
        }
        Label {
            objectName: "statusGpu"
            text: qsTr("GPU: no readings")
            opacity: 0.7
            Accessible.name: qsTr("GPU power, clock and contention")
        }
    }
}
